// The forwarding lane's parts on their own (docs/contract.md §8.1, §8.3): NodeRegistry (who carries a
// node), BindingGate (the binding check and its fast path) and ConnectionRequests (the relay's own
// bounded requests to a connection), over real listener sessions on socket pairs and a ManualClock.
// Expected texts are the contract's.
#include "service/forwarding/bindinggate.h"
#include "service/forwarding/connectionrequests.h"
#include "service/forwarding/nodeconnection.h"
#include "service/forwarding/noderegistry.h"
#include "service/transport/tlsconnection.h"
#include "service/transport/websocketsession.h"
#include "shared/contract/envelope.h"
#include "shared/contract/refusalnames.h"
#include "shared/util/manualclock.h"

#include <QSignalSpy>
#include <QTest>
#include <memory>
#include <sys/socket.h>
#include <unistd.h>

using namespace coreflow;
using namespace coreflow::contract;

namespace {

// Owns the far ends of the socket pairs and ignores what the connections report.
class Sessions : public NodeConnection::Owner {
public:
    ~Sessions() override
    {
        connections.clear();
        for (int fd : farEnds)
            ::close(fd);
    }
    NodeConnection *open(quint64 id)
    {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) != 0)
            qFatal("socketpair failed");
        farEnds.push_back(fds[1]);
        auto *tls = new TlsConnection(fds[0], nullptr);
        auto *session = new WebSocketSession(tls, QByteArray(), 1 << 20, WebSocketFrameDecoder::Role::Server);
        connections.push_back(std::make_unique<NodeConnection>(session, id, 0, *this));
        return connections.back().get();
    }
    void nodeFrame(NodeConnection *, const QByteArray &) override {}
    void nodeClosed(NodeConnection *) override {}

    std::vector<std::unique_ptr<NodeConnection>> connections;
    std::vector<int> farEnds;
};

// Two connections the registry holds, neither bound yet.
struct TwoConnections {
    TwoConnections() : a(sessions.open(1)), b(sessions.open(2))
    {
        registry.add(a);
        registry.add(b);
    }
    Sessions sessions;
    NodeRegistry registry;
    NodeConnection *a;
    NodeConnection *b;
};

SessionBinding binding(const QString &nodeId, const QString &sessionId, qint64 generation = 1)
{
    return SessionBinding{nodeId, QStringLiteral("cluster-1"), sessionId, generation};
}

Frame sessionRequest(const SessionBinding &b)
{
    auto parsed = Envelope::parse(Envelope::request(u"reportRuntimeNetworkProtection", u"c1",
                                                    QByteArray("{\"session\":") + Envelope::compact(b.toJson()) + "}"));
    if (!parsed)
        qFatal("test frame unreadable");
    return parsed.value();
}

struct Outcome {
    int calls = 0;
    std::optional<Refusal> refusal;
    QByteArray answerResponse;
};

ConnectionRequests::AnswerCallback record(Outcome &outcome)
{
    return [&outcome](const Frame *answer, const Refusal *refusal) {
        ++outcome.calls;
        if (refusal)
            outcome.refusal = *refusal;
        if (answer)
            outcome.answerResponse = answer->response.toByteArray();
    };
}

} // namespace

class TstForwardingParts : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // §8.1: the last registration Cloudly answered carries the node; the older connection carries
    // nothing and its close does not end the node.
    void registrySupersedesTheOlderConnection()
    {
        TwoConnections two;
        NodeRegistry &registry = two.registry;
        NodeConnection *a = two.a, *b = two.b;
        QSignalSpy registered(&registry, &NodeRegistry::nodeRegistered);
        QSignalSpy gone(&registry, &NodeRegistry::nodeGone);
        QCOMPARE(registry.connectionCount(), 2);
        QCOMPARE(a->describe(), QStringLiteral("connection #1"));

        registry.bind(a, binding("node-a", "s1"), 3, 1000);
        QCOMPARE(registry.carried("node-a"), a);
        QVERIFY(registry.carries(a));
        QCOMPARE(a->describe(), QStringLiteral("node node-a"));
        QCOMPARE(a->registeredUnderCarrier(), 3);
        QCOMPARE(a->registeredAtMs(), 1000);
        QCOMPARE(registered.size(), 1);
        QCOMPARE(registered.at(0).at(0).value<SessionBinding>(), binding("node-a", "s1"));

        registry.bind(b, binding("node-a", "s2"), 4, 2000);
        QCOMPARE(registry.carried("node-a"), b);
        QVERIFY(!registry.carries(a));
        QVERIFY(registry.remove(a));
        QCOMPARE(gone.size(), 0);
        QVERIFY(registry.remove(b));
        QCOMPARE(gone.size(), 1);
        QCOMPARE(gone.at(0).at(0).toString(), QStringLiteral("node-a"));
        QVERIFY(!registry.remove(b));
        QCOMPARE(registry.connectionCount(), 0);
    }

    // A connection that registers another node releases the one it carried.
    void rebindingToAnotherNodeReleasesTheFirst()
    {
        Sessions sessions;
        NodeRegistry registry;
        NodeConnection *a = sessions.open(1);
        registry.add(a);
        registry.bind(a, binding("node-b", "s1"), 1, 0);
        registry.bind(a, binding("node-a", "s2"), 1, 0);
        QCOMPARE(registry.carried("node-b"), nullptr);
        QCOMPARE(registry.carried("node-a"), a);
        const auto nodes = registry.carriedNodes();
        QCOMPARE(nodes.size(), 1);
        QCOMPARE(nodes.at(0).nodeId, QStringLiteral("node-a"));
    }

    // §8.1 "The nine session requests": the reasons, and a fast path that never outlives the binding's
    // place in the registry.
    void bindingGateReasons()
    {
        TwoConnections two;
        NodeRegistry &registry = two.registry;
        NodeConnection *a = two.a, *b = two.b;
        ManualClock clock;
        RefusalLogBound refusalLogBound(clock);
        FrameRefusalLog refusalLog(refusalLogBound);
        BindingGate gate(registry, refusalLog);
        const SessionBinding mine = binding("node-a", "s1");

        auto refused = gate.admit(sessionRequest(mine), a);
        QVERIFY(refused);
        QCOMPARE(refused->name, QString(refusal::sessionBindingRefused));
        QCOMPARE(refused->reason, QStringLiteral("this connection has registered no session"));

        registry.bind(a, mine, 1, 0);
        QVERIFY(!gate.admit(sessionRequest(mine), a));
        QVERIFY(!gate.admit(sessionRequest(mine), a)); // the same bytes again (fast path)
        QVERIFY(a->presentedAcceptedSession(Envelope::compact(mine.toJson())));

        refused = gate.admit(sessionRequest(binding("node-a", "s0")), a);
        QVERIFY(refused);
        QCOMPARE(refused->reason, QStringLiteral("the binding names a superseded session of node node-a"));
        refused = gate.admit(sessionRequest(binding("node-a", "s1", 0)), a);
        QVERIFY(refused);
        QCOMPARE(refused->reason, QStringLiteral("the binding names an older relay registration generation (0 < 1)"));

        const SessionBinding newer = binding("node-a", "s2");
        registry.bind(b, newer, 1, 0);
        refused = gate.admit(sessionRequest(mine), a); // the bytes the fast path knew, now superseded
        QVERIFY(refused);
        QCOMPARE(refused->reason, QStringLiteral("the session of node node-a on this connection was superseded by a newer registration"));
        refused = gate.admit(sessionRequest(newer), a);
        QVERIFY(refused);
        QCOMPARE(refused->reason, QStringLiteral("that session of node node-a was registered on another connection"));
        QVERIFY(!gate.admit(sessionRequest(newer), b));

        auto missing = Envelope::parse(Envelope::request(u"reportRuntimeNetworkProtection", u"c2", "{}"));
        refused = gate.admit(missing.value(), b);
        QVERIFY(refused);
        QCOMPARE(refused->name, QString(refusal::requestInvalid));
        QCOMPARE(refused->reason, QStringLiteral("field request.session is missing"));
    }

    // §8.3: a request to a connection ends once — answered, timed out on the clock, or lost with it.
    void connectionRequestsEndOnce()
    {
        TwoConnections two;
        NodeConnection *a = two.a, *b = two.b;
        ManualClock clock;
        ConnectionRequests requests(clock);
        two.registry.bind(a, binding("node-a", "s1"), 1, 0);

        Outcome timedOut;
        requests.send(a, QStringLiteral("applyRuntimeAssignment"), "{}", 8000, record(timedOut));
        clock.advance(7999);
        QCOMPARE(timedOut.calls, 0);
        clock.advance(1);
        QCOMPARE(timedOut.calls, 1);
        QCOMPARE(timedOut.refusal->name, QString(refusal::nodePushTimeout));
        QCOMPARE(timedOut.refusal->reason, QStringLiteral("node node-a did not answer applyRuntimeAssignment within 8000 ms"));

        Outcome answered;
        const QString id = requests.send(a, QStringLiteral("applyRuntimeAssignment"), "{}", 8000, record(answered));
        const Frame answer = Envelope::parse(Envelope::response(u"applyRuntimeAssignment", id, "{}", "{\"ok\":true}")).value();
        QVERIFY(!requests.answered(b, answer)); // another connection cannot answer it
        QCOMPARE(answered.calls, 0);
        QVERIFY(requests.answered(a, answer));
        QCOMPARE(answered.calls, 1);
        QCOMPARE(answered.answerResponse, QByteArray("{\"ok\":true}"));
        QVERIFY(!requests.answered(a, answer)); // ended: a second answer is to nothing
        clock.advance(8000);
        QCOMPARE(answered.calls, 1);

        Outcome lost;
        requests.send(a, QStringLiteral("applyRuntimeNetworkProjection"), "{}", 8000, record(lost));
        requests.connectionLost(b);
        QCOMPARE(lost.calls, 0);
        requests.connectionLost(a);
        QCOMPARE(lost.calls, 1);
        QCOMPARE(lost.refusal->name, QString(refusal::nodeConnectionLost));
        QCOMPARE(lost.refusal->reason, QStringLiteral("node node-a closed its connection before it answered applyRuntimeNetworkProjection"));
        clock.advance(8000);
        QCOMPARE(lost.calls, 1);
    }
};

QTEST_GUILESS_MAIN(TstForwardingParts)
#include "tst_forwardingparts.moc"
