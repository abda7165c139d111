#pragma once
// ReadinessCheck: `coreflow-console --check`'s verdict on one status snapshot (docs/contract.md §18.2).
//
// verdict() maps a RelayStatus to an exit code of consoleexitcodes.h and one value-free line:
//   ready                      → exitcode::ok, "ready: <n> nodes carried"
//   refusal of hop "cloudly"   → notReadyCloudly
//   parked                     → notReadyParked (the park line)
//   hop "registration"         → notReadyRegistration
//   listener.origin set and !listener.listening → notReadyListener
//   hop "palletRuntime" / "clusterIngress"     → notReadyPeerOffer
//   hop "relay"                → notReadyStarting
//   anything else not ready    → notReadyOther
//   ready, clockSkew.suspected → readyClockSkew, "CLOCK SKEW SUSPECTED (<source>): node <id>, <ms> ms:
//                                check NTP on this host[ and on the node]" (§9.6; any not-ready code wins)
// When several apply the lowest code wins; the line names that hop and its readiness line, and how many
// other refusals there are ("(+2 more)"). The line is not filtered: the caller prints it through
// TerminalText::printable().
#include "shared/status/relaystatus.h"

#include <QString>

namespace coreflow::console {

class ReadinessCheck {
public:
    struct Verdict {
        int exitCode = 0;
        QString line;
    };
    static Verdict verdict(const status::RelayStatus &status);
};

} // namespace coreflow::console
