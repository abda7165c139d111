// What a connection's refused frames may cost the relay's log (docs/contract.md §3.1 "Refusal log
// bound", D-61): unreadable frames and session-binding refusals through a running relay, on its
// ManualClock, read back from the log capture.
#include "tests/support/epolltestmain.h"
#include "tests/peers/peerframe.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/support/loggedrelaytest.h"
#include "shared/contract/refusalnames.h"

#include <QJsonDocument>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;

namespace {
QByteArray unreadableFrame(int i)
{
    // Valid JSON with a readable correlation id, but not the envelope: answered by name, the
    // connection stays open (docs/contract.md §3).
    return QByteArrayLiteral(R"({"method":"getRuntimeRegistryCredential","request":[1],"correlation":{"id":"bad-)")
           + QByteArray::number(i) + R"(","phase":"request"}})";
}

QByteArray foreignSessionFrame(int i)
{
    peers::PeerSessionBinding b{QStringLiteral("node-x"), QStringLiteral("cluster-x"), QStringLiteral("session-x"), 1};
    return QByteArrayLiteral(R"({"method":"getRuntimeRegistryCredential","request":{"session":)")
           + QJsonDocument(b.toJson()).toJson(QJsonDocument::Compact) + R"(},"correlation":{"id":"bind-)"
           + QByteArray::number(i) + R"(","phase":"request"}})";
}
} // namespace

class TstFrameRefusalLog : public LoggedRelayTest {
    Q_OBJECT

private Q_SLOTS:

    // One connection sending 64 unreadable frames: every one is answered by name, but only its 1st,
    // 2nd, 4th, 8th, 16th, 32nd and 64th refusal is logged (7 lines), each with its count.
    void unreadableFramesLogOnPowersOfTwoPerConnection()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto stranger = f.connectNode("stranger");
        for (int i = 1; i <= 64; ++i)
            QVERIFY(stranger->sendRaw(unreadableFrame(i)));
        QTRY_VERIFY(stranger->answerFor("bad-64").has_value());
        QVERIFY(stranger->answerFor("bad-64")->rawError.contains("request-invalid"));
        QCOMPARE(log.count("sent an unreadable frame"), 7);
        QVERIFY(log.contains("(64 on this connection)"));
        QVERIFY(stranger->isConnected());
    }

    // Binding refusals of a connection that registered nothing count the same way.
    void bindingRefusalsLogOnPowersOfTwoPerConnection()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto stranger = f.connectNode("stranger");
        for (int i = 1; i <= 40; ++i)
            QVERIFY(stranger->sendRaw(foreignSessionFrame(i)));
        QTRY_VERIFY(stranger->answerFor("bind-40").has_value());
        QVERIFY(stranger->answerFor("bind-40")->rawError.contains(contract::refusal::sessionBindingRefused));
        QCOMPARE(log.count("refused getRuntimeRegistryCredential"), 6); // 1, 2, 4, 8, 16, 32
        QCOMPARE(f.cloudly->callCount("getRuntimeRegistryCredential"), 0);
    }

    // Many connections together: at most 10 refusal lines per second of the relay's clock; when the
    // next second opens, one line says how many were held back.
    void allConnectionsTogetherLogAtMostTenLinesPerSecond()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        std::vector<std::unique_ptr<peers::SimulatedPalletNode>> strangers;
        for (int c = 0; c < 30; ++c)
            strangers.push_back(f.connectNode(QStringLiteral("stranger-%1").arg(c)));
        for (auto &s : strangers)
            QVERIFY(s->sendRaw(unreadableFrame(1)));
        for (auto &s : strangers)
            QTRY_VERIFY(s->answerFor("bad-1").has_value());
        QCOMPARE(log.count("sent an unreadable frame"), 10);
        QCOMPARE(log.count("were not logged"), 0);

        f.clock.advance(1000);
        QVERIFY(strangers.front()->sendRaw(unreadableFrame(2)));
        QTRY_VERIFY(strangers.front()->answerFor("bad-2").has_value());
        QCOMPARE(log.count("sent an unreadable frame"), 11);
        QVERIFY2(log.contains("20 more refusals were not logged"), qPrintable(log.lines().join('\n')));
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstFrameRefusalLog)
#include "tst_framerefusallog.moc"
