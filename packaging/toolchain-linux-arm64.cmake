# Cross-compiling for linux-arm64 with Debian's cross toolchain and arm64 multiarch packages
# (used only inside the isolated chroot of packaging/build-arm64-chroot.sh, never on a shared host).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# The build machine's pkg-config, looking only at the arm64 .pc files (libsodium).
set(PKG_CONFIG_EXECUTABLE /usr/bin/pkg-config)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
# Qt's moc/rcc come from the build machine's Qt (amd64 qt6-base-dev-tools).
set(QT_HOST_PATH /usr)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
