#pragma once
// coreflow-console exit codes (also listed by --help).
namespace coreflow::console::exitcode {
inline constexpr int ok = 0;             // snapshot printed / window closed / --help / --version
inline constexpr int usage = 2;          // unknown option, conflicting modes, missing argument
inline constexpr int cannotConnect = 3;  // no relay listening at the socket path (or it went away first)
inline constexpr int accessRefused = 4;  // socket permission denied or status-access-denied refusal
inline constexpr int protocolError = 5;  // the peer did not speak the status protocol (version 1)
} // namespace coreflow::console::exitcode
