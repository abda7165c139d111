#pragma once
// Where the status socket lives. One function for both sides (the relay's StatusServer and the
// coreflow-console client), so the two can never disagree about the default path.
//
// Server side (the relay creates the socket), first match wins:
//   1. $RUNTIME_DIRECTORY/status.sock — systemd sets RUNTIME_DIRECTORY for RuntimeDirectory=coreflow
//      (when it holds several colon-separated directories, the first is used);
//   2. /run/coreflow/status.sock when /run/coreflow exists and is writable by this process;
//   3. $XDG_RUNTIME_DIR/coreflow-status.sock when XDG_RUNTIME_DIR is set;
//   4. /tmp/coreflow-status-<uid>.sock.
// Client side (the console looks for it), first match wins:
//   1. $RUNTIME_DIRECTORY/status.sock when set (a console started inside the unit's environment);
//   2. /run/coreflow/status.sock when /run/coreflow exists (readable is enough: the operator connects,
//      it does not create);
//   3. and 4. as on the server side.
// The console's --socket PATH overrides all of this. Whether the place is safe to use (another user
// may have created /tmp/coreflow-status-<uid>.sock first) is StatusSocketPlace's judgement.
#include <QString>

namespace coreflow::status {

enum class StatusSocketSide { Server, Client };

// The default status socket path for the given side (never empty). Reads the environment and the file
// system at call time; no side effects.
QString defaultStatusSocketPath(StatusSocketSide side = StatusSocketSide::Server);

} // namespace coreflow::status
