#pragma once
// RelayFixture: one relay (the composition root, in-process, on a ManualClock) between a LoopbackCloudly
// and any number of SimulatedPalletNodes, all on real TLS sockets on 127.0.0.1. The clock starts at the
// real time (certificates are checked against it) and moves only when a test advances it, so the
// forwarding budgets are tested exactly, without sleeping.
#include "service/app/coreflow.h"
#include "tests/peers/loopbackcloudly.h"
#include "tests/peers/simulatedpalletnode.h"
#include "tests/peers/testcertificateauthority.h"
#include "shared/util/manualclock.h"

#include <QTemporaryDir>
#include <functional>
#include <memory>
#include <optional>

namespace coreflow::testing {

class RelayFixture {
public:
    // tweakCloudly: changes the loopback Cloudly's options before it is built (e.g. httpFront).
    explicit RelayFixture(bool relayBlock = true,
                          const std::function<void(peers::LoopbackCloudly::Options &)> &tweakCloudly = {});
    ~RelayFixture();

    static quint16 freePort();

    peers::TestCertificateAuthority ca;
    ManualClock clock;
    QByteArray bearer;
    quint16 relayPort = 0;
    std::unique_ptr<peers::LoopbackCloudly> cloudly;
    std::unique_ptr<Coreflow> relay;
    QTemporaryDir dir;
    // The silence rule (RelayTiming::sessionPingIntervalMs / sessionSilenceDeadlineMs, docs/contract.md
    // §3.3) is off in relays this fixture makes unless a test sets this first: the tests of other rules
    // move the ManualClock minutes in one advance() without an event-loop turn, so no Pong could ever
    // arrive in between. The silence tests set it and step the clock with the event loop running.
    bool keepalive = false;
    // Likewise the registration deadline of unregistered connections (RelayTiming::registrationDeadlineMs,
    // docs/contract.md §3.4): off unless a test sets this first (tests of other rules jump the clock
    // minutes with unregistered connections open).
    bool registrationDeadline = false;

    RelayConfiguration configuration() const;
    // Builds the relay (not started) from configuration(); tests may change the config first.
    Coreflow &makeRelay(const RelayConfiguration &config, const contract::RelayTiming &timing = {});
    // makeRelay(configuration()) + start + wait for started(). false (with a QTest failure) otherwise.
    bool startRelay();
    // Waits for startFailed and returns its reason (empty on timeout).
    QString waitForStartFailure();
    bool stopRelay();
    // A barrier on the Cloudly hop instead of a real-time wait before asserting that the relay sent
    // nothing: the loopback Cloudly sends a request the relay answers at once (getSwarmNodes, a retired
    // Swarm method, docs/contract.md §16.1) and waits for that answer. The session is one ordered
    // socket, so whatever the relay wrote to Cloudly before answering has arrived by then. It covers
    // what the relay does synchronously (timers fired by clock.advance(), handlers of frames already
    // received); a send that would follow a further network round trip is not covered. false (with a
    // QTest failure) when no answer came within 10 s.
    bool settleCloudlyHop();
    // The same barrier on one node's socket: the node calls a method the listener serves on no lane
    // and the relay answers at once (method-not-served, docs/contract.md §3); whatever the relay wrote
    // to that node before answering (a push, an offered renewal) has arrived by then.
    static bool settleNodeHop(peers::SimulatedPalletNode &node);

    // Moves the clock to the relay's identity renewal and waits until Cloudly saw one more
    // refreshClusterIdentity and the relay armed the next renewal (or, when mayPark, parked instead).
    // false (with a QTest failure) when either did not happen within 5 s.
    bool renewIdentity(bool mayPark = false);

    // Cloudly -> relay: pushes `method` with the raw request body and returns the relay's answer once it
    // arrived (nullopt when none came within 5000 ms). The clock does not move meanwhile.
    std::optional<peers::PeerFrame> dispatch(const QString &method, const QByteArray &rawRequest);
    std::optional<peers::PeerFrame> dispatch(const QString &method, const QJsonObject &request);

    // Takes the relay's Cloudly session down and keeps it down (reconnects are refused); true once the
    // relay has noticed.
    bool takeCloudlySessionDown();
    // Lets reconnects succeed again and moves the clock exactly to each reconnect attempt (never into a
    // handshake timeout) until the session is dispatchable; true on success.
    bool bringCloudlySessionBack();

    // The options of a simulated node dialling the relay listener (or port, e.g. a proxy in front of it).
    peers::SimulatedPalletNode::Options nodeOptions(const QString &nodeId, quint16 port = 0) const;
    // A node connected to the relay listener (not registered).
    std::unique_ptr<peers::SimulatedPalletNode> connectNode(const QString &nodeId);
    // A node connected and registered through the relay.
    std::unique_ptr<peers::SimulatedPalletNode> registeredNode(const QString &nodeId);
};

} // namespace coreflow::testing
