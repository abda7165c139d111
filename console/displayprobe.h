#pragma once
// DisplayProbe: whether the desktop window can be shown, decided before any QApplication exists
// (Qt aborts the process when its platform plugin cannot start, docs/contract.md §18.2).
//
// unavailableReason() returns "" when a window can be shown, else a short value-free reason:
//   - QT_QPA_PLATFORM unset (or xcb/wayland) and neither DISPLAY nor WAYLAND_DISPLAY set: "no display
//     (DISPLAY and WAYLAND_DISPLAY are unset)", without starting anything;
//   - otherwise a child process (fork) constructs a QGuiApplication with the same platform and exits;
//     if it does not exit 0 (the plugin failed: Qt's own abort), "the Qt platform plugin could not start
//     (<platform>)". The child's output goes to /dev/null. Costs one fork and a platform start.
#include <QString>

namespace coreflow::console {

class DisplayProbe {
public:
    static QString unavailableReason(int argc, char **argv);
};

} // namespace coreflow::console
