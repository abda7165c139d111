#!/usr/bin/python3
"""Stage and seal the Coreflow host release (docs/contract.md §19.5).

From a build directory's `coreflow` (and `coreflow-console`, when built) this writes, under --out:

  coreflow-relay-<version>-<target>/          the release directory (see RELEASE_LAYOUT below)
  coreflow-relay-<version>-<target>.tar.gz    that directory, reproducibly archived
  tspack-manifest.json                        package, name, version, source commit, publishable,
                                              every archived file's sha256 and mode
  SHA256SUMS.txt                              the digests of the manifest and the archive

Self-contained: every shared library the executables and the Qt plugins they load need is copied
into lib/, except glibc's own (the files of Debian's libc6 package: the host provides those), and
every copied ELF file gets an $ORIGIN-relative run path (patchelf). Qt stays a set of replaceable
shared libraries (LGPL). The build fails when:
  - a needed library does not resolve on this host,
  - any file needs Qt HttpServer (GPL-3 in Debian; only test peers may link it),
  - a bundled library belongs to no Debian package or its package has no copyright file,
  - a bundled file needs GLIBC_PRIVATE (it would be tied to one glibc build).

Reproducible: entries sorted by name, every mtime SOURCE_DATE_EPOCH (default: the commit time of
HEAD), owner and group 0/0 numeric, GNU format, gzip -n. Two runs over the same binaries give the
same archive digest.

Only Debian's /usr/bin/python3 standard library is used.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

PACKAGE = "@serve.zone/coreflow"
NAME = "coreflow-relay"
GLIBC_PACKAGE = "libc6"
# Qt plugins the executables load at run time (dlopen; ldd does not see them). The relay needs the
# OpenSSL TLS backend for every TLS socket; the console's window mode needs a platform plugin:
# xcb for a display (also over ssh -X), offscreen for tests and a display-less host.
RELAY_PLUGINS = ["tls/libqopensslbackend.so"]
CONSOLE_PLUGINS = ["platforms/libqxcb.so", "platforms/libqoffscreen.so"]
# Names Qt's OpenSSL TLS backend dlopen()s before any versioned one (Qt 6.4 with OpenSSL 3 tries the
# development names libssl.so/libcrypto.so first). Without these links beside the bundled libraries it
# would load the host's copy (from libssl-dev) next to the bundled one; with them, the run path finds the
# bundled file and the loader reuses the already loaded object.
DLOPEN_ALIASES = {"libssl.so": "libssl.so.3", "libcrypto.so": "libcrypto.so.3"}
QT_CONF = "[Paths]\nPrefix = .\nPlugins = plugins\n"


class ReleaseError(Exception):
    pass


def run(args, **kw):
    return subprocess.run(args, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw).stdout


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


MULTIARCH = {"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}


def debian_arch():
    return run(["dpkg", "--print-architecture"]).strip()


def target_of(arch):
    return {"amd64": "linux-amd64", "arm64": "linux-arm64"}.get(arch) or f"linux-{arch}"


def project_version(build_dir):
    cache = Path(build_dir, "CMakeCache.txt").read_text()
    m = re.search(r"^CMAKE_PROJECT_VERSION:STATIC=(\S+)$", cache, re.M)
    if not m:
        raise ReleaseError(f"{build_dir}/CMakeCache.txt names no CMAKE_PROJECT_VERSION")
    return m.group(1)


def source_facts(source_dir):
    commit = run(["git", "-C", source_dir, "rev-parse", "HEAD"]).strip()
    commit_time = int(run(["git", "-C", source_dir, "log", "-1", "--format=%ct", "HEAD"]).strip())
    dirty = run(["git", "-C", source_dir, "status", "--porcelain", "--untracked-files=normal"]).strip() != ""
    return commit, commit_time, dirty


def qt_plugin_dir(cross_arch=None):
    if cross_arch:
        return Path("/usr/lib", MULTIARCH[cross_arch], "qt6/plugins")
    try:
        return Path(run(["qtpaths6", "--query", "QT_INSTALL_PLUGINS"]).strip())
    except (OSError, subprocess.CalledProcessError):
        return Path("/usr/lib", run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).strip(), "qt6/plugins")


def ldd_closure(elf):
    """Every library `elf` needs, transitively, as {soname: resolved path}."""
    out = run(["ldd", str(elf)])
    libs = {}
    for line in out.splitlines():
        line = line.strip()
        if "=>" in line:
            name, rest = [s.strip() for s in line.split("=>", 1)]
            if rest.startswith("not found"):
                raise ReleaseError(f"{elf} needs {name}, which does not resolve on this host")
            path = rest.split(" (", 1)[0].strip()
            if path:
                libs[name] = path
        elif line.startswith("/"):
            path = line.split(" (", 1)[0]
            libs[os.path.basename(path)] = path
    return libs


def readelf_closure(elf, multiarch):
    """The same as ldd_closure for a foreign architecture's ELF file (ldd would have to run it):
    follow NEEDED entries through Debian's multiarch library directories."""
    dirs = [f"/lib/{multiarch}", f"/usr/lib/{multiarch}", "/lib", "/usr/lib"]
    libs, todo = {}, [str(elf)]
    while todo:
        current = todo.pop()
        for name in needed_of(current):
            if name in libs:
                continue
            found = next((os.path.join(d, name) for d in dirs if os.path.exists(os.path.join(d, name))), None)
            if found is None:
                raise ReleaseError(f"{current} needs {name}, which is in no {multiarch} library directory")
            libs[name] = found
            todo.append(found)
    return libs


def needed_of(elf):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run(["readelf", "-d", "-W", str(elf)]))


def path_spellings(path):
    """`path`, its real file, and each with and without the merged-/usr prefix."""
    out = []
    for p in (path, os.path.realpath(path)):
        out.append(p)
        if p.startswith("/usr/lib/"):
            out.append(p[len("/usr"):])
        elif p.startswith("/lib/"):
            out.append("/usr" + p)
    return list(dict.fromkeys(out))


def owning_packages(paths):
    """{path: Debian package that ships it} in one dpkg-query call; a path no package ships is absent."""
    spellings = {p: path_spellings(p) for p in paths}
    every = sorted({s for ss in spellings.values() for s in ss})
    r = subprocess.run(["dpkg-query", "-S"] + every, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    shipped = {}
    for line in r.stdout.splitlines():
        if line.startswith("diversion "):
            continue
        pkgs, sep, file = line.partition(": ")
        if sep:
            shipped.setdefault(file.strip(), pkgs.split(", ")[0].strip())
    result = {}
    for p, ss in spellings.items():
        for s in ss:
            if s in shipped:
                result[p] = shipped[s]
                break
    return result


def package_facts(pkg):
    fmt = "${Package}\t${Version}\t${source:Package}\t${source:Version}\t${Architecture}"
    name, version, src, src_version, arch = run(["dpkg-query", "-W", "-f", fmt, pkg]).split("\t")
    copyright_path = Path("/usr/share/doc", name, "copyright")
    if not copyright_path.is_file():
        raise ReleaseError(f"package {pkg} ships no {copyright_path}: its notices cannot be stated")
    text = copyright_path.read_text(errors="replace")
    licenses = sorted({m.strip() for m in re.findall(r"^License:[ \t]*(\S[^\n]*)$", text, re.M)})
    return {
        "package": name,
        "architecture": arch,
        "version": version,
        "sourcePackage": src,
        "sourceVersion": src_version,
        "copyrightFile": str(copyright_path),
        "machineReadable": text.startswith("Format:"),
        "licenses": licenses,
        "source": f"apt-get source {src}={src_version} (also https://snapshot.debian.org/package/{src}/{src_version}/)",
        "_text": text,
    }


def glibc_versions(elf):
    """GLIBC_x.y versions `elf` requires (its .gnu.version_r entries)."""
    out = run(["readelf", "-V", "-W", str(elf)])
    section = out.split("Version needs section", 1)
    if len(section) < 2:
        return set()
    return set(re.findall(r"Name: (GLIBC_[0-9.]+|GLIBC_PRIVATE)\b", section[1]))


def version_key(v):
    return tuple(int(x) for x in v[len("GLIBC_"):].split("."))


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def stage(args):
    build_dir = Path(args.build_dir).resolve()
    source_dir = Path(args.source_dir).resolve()
    version = args.version or project_version(build_dir)
    arch = args.cross or debian_arch()
    target = args.target or target_of(arch)
    commit, commit_time, dirty = source_facts(source_dir)
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or commit_time)
    base = f"{NAME}-{version}-{target}"
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    root = out / base
    if root.exists():
        shutil.rmtree(root)
    (root / "lib").mkdir(parents=True)

    executables = [("coreflow", build_dir / "service" / "coreflow", RELAY_PLUGINS)]
    console = build_dir / "console" / "coreflow-console"
    if console.exists() and not args.no_console:
        executables.append(("coreflow-console", console, CONSOLE_PLUGINS))
    elif not args.no_console:
        raise ReleaseError(f"{console} is missing (build it, or pass --no-console)")
    for _, src, _ in executables:
        if not src.exists():
            raise ReleaseError(f"{src} is missing: build the coreflow target first")

    plugin_dir = qt_plugin_dir(args.cross)
    plugins = sorted({p for _, _, ps in executables for p in ps})

    # What the release's ELF files need, resolved against this host's libraries.
    sources = [src for _, src, _ in executables] + [plugin_dir / p for p in plugins]
    closure = {}
    for elf in sources:
        if not elf.exists():
            raise ReleaseError(f"Qt plugin {elf} is missing on this host")
        closure.update(readelf_closure(elf, MULTIARCH[arch]) if args.cross else ldd_closure(elf))
    for elf in sources:
        for n in needed_of(elf):
            closure.setdefault(n, None)
    httpserver = sorted(n for n in closure if "Qt6HttpServer" in n or "Qt6HttpServer" in str(closure[n]))
    if httpserver:
        raise ReleaseError(f"the release would need {', '.join(httpserver)} (Qt HttpServer is GPL-3: never in the release)")

    bundled = {}   # soname -> (host path, package)
    system = {}    # soname -> host path (glibc)
    resolved = {s: p for s, p in closure.items()
                if p is not None and not s.startswith("linux-vdso") and not s.startswith("linux-gate")}
    owners = owning_packages(list(resolved.values()) + [str(plugin_dir / p) for p in plugins])
    for soname, path in sorted(resolved.items()):
        pkg = owners.get(path)
        if pkg is None:
            raise ReleaseError(f"bundled library {path} ({soname}) belongs to no Debian package: its license is unknown")
        if pkg.split(":")[0] == GLIBC_PACKAGE:
            system[soname] = path
        else:
            bundled[soname] = (path, pkg)

    # Copy, then set $ORIGIN-relative run paths.
    for name, src, _ in executables:
        dst = root / name
        if args.strip:
            strip = f"{MULTIARCH[arch]}-strip" if args.cross else "strip"
            run([strip, "--strip-all", "-o", str(dst), str(src)])
        else:
            shutil.copyfile(src, dst)
        run(["patchelf", "--set-rpath", "$ORIGIN/lib", str(dst)])
        os.chmod(dst, 0o755)
    for soname, (src, _) in bundled.items():
        dst = root / "lib" / soname
        shutil.copyfile(os.path.realpath(src), dst)
        run(["patchelf", "--set-rpath", "$ORIGIN", str(dst)])
        os.chmod(dst, 0o644)
    for alias, soname in DLOPEN_ALIASES.items():
        if soname in bundled:
            os.symlink(soname, root / "lib" / alias)
    for p in plugins:
        dst = root / "plugins" / p
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(plugin_dir / p, dst)
        depth = len(Path(p).parts)  # plugins/<kind>/<file>: lib is ../../lib
        run(["patchelf", "--set-rpath", "$ORIGIN/" + "../" * depth + "lib", str(dst)])
        os.chmod(dst, 0o644)

    (root / "qt.conf").write_text(QT_CONF)
    shutil.copyfile(source_dir / "packaging" / "qenv.yml", root / "qenv.yml")
    shutil.copyfile(source_dir / "LICENSE", root / "license")

    # glibc floor: the highest GLIBC_x.y any shipped ELF file requires.
    elves = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and is_elf(p))
    required = {}
    for elf in elves:
        vs = glibc_versions(elf)
        if "GLIBC_PRIVATE" in vs:
            raise ReleaseError(f"{elf.relative_to(root)} needs GLIBC_PRIVATE: it must not be bundled")
        for v in vs:
            required.setdefault(v, []).append(str(elf.relative_to(root)))
    floor = max(required, key=version_key) if required else None
    floor_files = sorted(required.get(floor, []))

    # Third-party notices from the Debian copyright file of every bundled library's package.
    packages = {}
    for soname, (path, pkg) in sorted(bundled.items()):
        if pkg not in packages:
            packages[pkg] = package_facts(pkg)
            packages[pkg]["files"] = []
        packages[pkg]["files"].append(f"lib/{soname}")
    for p in plugins:
        path = plugin_dir / p
        pkg = owners.get(str(path))
        if pkg is None:
            raise ReleaseError(f"Qt plugin {path} belongs to no Debian package")
        if pkg not in packages:
            packages[pkg] = package_facts(pkg)
            packages[pkg]["files"] = []
        packages[pkg]["files"].append(f"plugins/{p}")
    qt_version = packages.get("libqt6core6:" + arch, {}).get("version")
    notices_json = {
        "generator": "packaging/make-release.py (Debian copyright files, dpkg-query -S)",
        "binary": [name for name, _, _ in executables],
        "target": target,
        "runtime": {
            "glibcFloor": floor[len("GLIBC_"):] if floor else None,
            "glibcProvidedByHost": sorted(system),
            "qt": qt_version,
            "qtLinkage": "shared libraries in lib/ and plugins/, replaceable (LGPL-3.0): put a compatible "
                         "build of the same Qt 6 major version in their place, or first on LD_LIBRARY_PATH "
                         "(the run paths are DT_RUNPATH, which LD_LIBRARY_PATH precedes)",
        },
        "packages": [
            {k: v for k, v in facts.items() if not k.startswith("_")}
            for _, facts in sorted(packages.items())
        ],
    }
    (root / "coreflow.third-party-notices.json").write_text(json.dumps(notices_json, indent=2, sort_keys=True) + "\n")
    lines = [
        f"Third-party notices of {base}",
        "",
        "coreflow and coreflow-console are licensed under the project's license (the file `license`).",
        "They use the following Debian packages, whose shared libraries ship in lib/ and plugins/",
        "unmodified except for their run path (patchelf --set-rpath). glibc (Debian package libc6) is",
        f"not shipped: the host provides it, version {floor[len('GLIBC_'):] if floor else '?'} or later.",
        "",
        "Qt is used under the LGPL-3.0: its libraries stay separate shared objects that you may replace",
        "with your own build of a compatible Qt 6 (see runtime.qtLinkage in the JSON notices).",
        "The complete corresponding source of every package below is available from Debian with the",
        "`apt-get source` line given for it, or from snapshot.debian.org.",
        "",
    ]
    for pkg, facts in sorted(packages.items()):
        lines += [
            "=" * 78,
            f"Package: {facts['package']} {facts['version']} ({facts['architecture']})",
            f"Source: {facts['sourcePackage']} {facts['sourceVersion']}: {facts['source']}",
            f"Files: {', '.join(facts['files'])}",
            f"Licenses: {', '.join(facts['licenses']) or 'see the copyright text below'}",
            f"Copyright file: {facts['copyrightFile']}",
            "-" * 78,
            facts["_text"].rstrip("\n"),
            "",
        ]
    (root / "coreflow.third-party-notices.txt").write_text("\n".join(lines) + "\n")

    # Modes: directories 0755, executables 0755, everything else 0644.
    for p in sorted(root.rglob("*")):
        if p.is_symlink():
            continue
        if p.is_dir():
            os.chmod(p, 0o755)
        elif p.name not in ("coreflow", "coreflow-console") or p.parent != root:
            os.chmod(p, 0o644)
    os.chmod(root, 0o755)

    # The archive: one directory, nothing else.
    archive = out / f"{base}.tar.gz"
    tar = subprocess.Popen(
        ["tar", "--create", "--format=gnu", "--sort=name", f"--mtime=@{epoch}", "--owner=0", "--group=0",
         "--numeric-owner", "--no-acls", "--no-xattrs", "--no-selinux", "-C", str(out), base],
        stdout=subprocess.PIPE, env=dict(os.environ, LC_ALL="C"))
    with open(archive, "wb") as f:
        gz = subprocess.run(["gzip", "-n"], stdin=tar.stdout, stdout=f)
    tar.stdout.close()
    if tar.wait() != 0 or gz.returncode != 0:
        raise ReleaseError("tar | gzip failed")

    files = []
    for p in sorted(root.rglob("*"), key=lambda q: str(q.relative_to(root))):
        if p.is_symlink():
            files.append({"path": str(p.relative_to(root)), "type": "symlink", "target": os.readlink(p)})
        elif p.is_file():
            files.append({
                "path": str(p.relative_to(root)),
                "type": "file",
                "mode": format(stat.S_IMODE(p.stat().st_mode), "04o"),
                "size": p.stat().st_size,
                "sha256": sha256_of(p),
            })
    manifest = {
        "package": PACKAGE,
        "name": NAME,
        "version": version,
        "sourceCommit": commit,
        # Only a build of a clean checkout may be published: a dirty tree's archive is not the commit's.
        "publishable": not dirty,
        "sourceDateEpoch": epoch,
        "bundles": [{
            "id": target,
            "archive": archive.name,
            "directory": base,
            "sha256": sha256_of(archive),
            "size": archive.stat().st_size,
            "glibcFloor": floor[len("GLIBC_"):] if floor else None,
            "files": files,
        }],
    }
    manifest_path = out / "tspack-manifest.json"
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    sums = [f"{sha256_of(p)}  {p.name}\n" for p in (manifest_path, archive)]
    (out / "SHA256SUMS.txt").write_text("".join(sums))

    unpacked = sum(f.get("size", 0) for f in files)
    print(f"release: {archive} ({archive.stat().st_size} bytes, {unpacked} bytes unpacked, {len(files)} files)")
    print(f"release: sha256 {manifest['bundles'][0]['sha256']}")
    print(f"release: glibc floor {notices_json['runtime']['glibcFloor']} (needed by {', '.join(floor_files)})")
    print(f"release: bundled {len(bundled)} libraries from {len(packages)} Debian packages; host glibc: {', '.join(sorted(system))}")
    print(f"release: source {commit}{' (dirty tree: publishable false)' if dirty else ''}, mtime {epoch}")
    return root


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--build-dir", required=True, help="CMake build directory holding service/coreflow")
    ap.add_argument("--source-dir", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--out", required=True, help="directory for the release directory, archive, manifest, sums")
    ap.add_argument("--version", help="default: the CMake project version of --build-dir")
    ap.add_argument("--target", help="bundle id, default linux-<dpkg architecture>")
    ap.add_argument("--cross", choices=sorted(MULTIARCH), help="the build dir holds this Debian architecture's "
                    "binaries (cross-compiled): resolve libraries with readelf in its multiarch directories")
    ap.add_argument("--no-console", action="store_true", help="leave coreflow-console out")
    ap.add_argument("--no-strip", dest="strip", action="store_false", help="keep the executables' symbols")
    args = ap.parse_args()
    try:
        stage(args)
    except (ReleaseError, subprocess.CalledProcessError) as e:
        detail = e.stderr.strip() if isinstance(e, subprocess.CalledProcessError) and e.stderr else ""
        print(f"release: failed: {e}{': ' + detail if detail else ''}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
