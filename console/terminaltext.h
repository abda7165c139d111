#pragma once
// TerminalText: strings the relay sent, made safe to print on an operator's terminal (--text, --watch
// and the console's error lines; docs/contract.md §18 "Console output").
//
// A status string is the relay's, but whoever can write into it (a node id, a peer's refusal line, a
// squatting server) must not be able to move the cursor, retitle the window or hide text. Every
// control character (C0 including newline, tab and ESC; DEL; C1) and every format character (bidi
// overrides and isolates, zero-width marks) is replaced with U+FFFD, so one value stays on one line and
// shows that something was replaced. Pure functions.
#include "shared/status/relaystatus.h"

#include <QString>

namespace coreflow::console {

class TerminalText {
public:
    static constexpr char16_t replacement = 0xFFFD;
    // text with every control and format character replaced (see above).
    static QString printable(const QString &text);
    // The same status with printable() applied to every string it carries.
    static status::RelayStatus printableStatus(const status::RelayStatus &status);
};

} // namespace coreflow::console
