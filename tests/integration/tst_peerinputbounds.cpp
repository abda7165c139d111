// What a node sends cannot make the relay repeat it or hold on to it (issue 14 defects 5 and 8;
// docs/contract.md §1 "Quoting a peer's names", §3 "Parser memory"), through a running relay on real
// TLS sockets: a hostile method name or session key is not echoed into the refusal, and a frame near
// the 16 MiB bound leaves no parser memory behind once it is answered.
// Rules: CL-01 (unknown methods are refused by name), FW-06 (session binding refusals).
#include "tests/support/epolltestmain.h"
#include "tests/peers/peerframe.h"
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"

#include "shared/contract/envelope.h"
#include "shared/contract/refusalnames.h"

#include <QJsonDocument>
#include <QTest>

using namespace coreflow;
using namespace coreflow::testing;

namespace {
bool printable(const QString &text)
{
    for (const QChar ch : text)
        if (ch.category() == QChar::Other_Control || ch.category() == QChar::Other_Format)
            return false;
    return true;
}

// Whether a line of the relay (not of a loopback peer, coreflow.peers.*) contains needle.
bool relayLogged(const LogCapture &log, const QString &needle)
{
    for (const QString &line : log.lines())
        if (!line.contains(QLatin1String(" coreflow.peers.")) && line.contains(needle))
            return true;
    return false;
}
} // namespace

class TstPeerInputBounds : public QObject {
    Q_OBJECT
    LogCapture log;
private Q_SLOTS:
    void init()
    {
        log.install();
        log.clear();
    }

    // Issue 14 review gap 4 (§8.1, §1 "Strings"): request.nodeId must be an id before anything is
    // forwarded: 300 characters, or a control character, is refused request-invalid at the relay and
    // Cloudly sees no registration. The refusal and the log never repeat the value.
    void nodeIdThatIsNotAnIdIsRefusedAtTheRelay_FW02()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        const QStringList hostile{QString(300, QLatin1Char('n')), QStringLiteral("node\x1b]0;owned\x07")};
        for (const QString &nodeId : hostile) {
            log.clear();
            auto node = f.connectNode(nodeId);
            QString text;
            node->call(QStringLiteral("registerPalletRuntimeSession"), node->registrationRequest(),
                       [&](const peers::PeerFrame &answer) { text = answer.errorRefusal().text(); });
            QTRY_VERIFY(!text.isEmpty());
            QCOMPARE(text, QStringLiteral("request-invalid: field request.nodeId is not an id (non-empty, at most 256 "
                                          "characters, no control characters)"));
            QVERIFY(node->isConnected());
            QVERIFY(!relayLogged(log, nodeId));
        }
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(f.cloudly->callCount("registerPalletRuntimeSession"), 0);
    }

    // Issue 14 review gap 4: a node id that is an id but not plain (here 200 characters) is served,
    // and the relay's log lines name it by its length only (RefusalQuote), never in full.
    void longNodeIdIsLoggedBounded()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        const QString nodeId(200, QLatin1Char('n'));
        auto node = f.registeredNode(nodeId);
        QVERIFY(node->session());
        QTRY_VERIFY(log.contains(QStringLiteral("registered through this relay")));
        QVERIFY(relayLogged(log, QStringLiteral("node a name of 200 characters registered through this relay")));
        QVERIFY(!relayLogged(log, nodeId.left(65)));
    }

    // Defect 8: the unknown method's name is the node's choice; the refusal gives its length only.
    void hostileMethodNameIsNotRepeated_CL01()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        const QString method = QStringLiteral("x\x1b]0;owned\x07") + QString(300, QLatin1Char('m'));
        QString text;
        node->callWithSession(method, {}, [&](const peers::PeerFrame &answer) { text = answer.errorRefusal().text(); });
        QTRY_VERIFY(!text.isEmpty());
        QCOMPARE(text, QStringLiteral("method-not-served: the relay listener serves no method a name of %1 characters")
                           .arg(method.size()));
        // A plain name is still named, so an operator can see which method was wrong.
        text.clear();
        node->callWithSession(QStringLiteral("noSuchMethod"), {}, [&](const peers::PeerFrame &answer) { text = answer.errorRefusal().text(); });
        QTRY_VERIFY(!text.isEmpty());
        QCOMPARE(text, QStringLiteral("method-not-served: the relay listener serves no method noSuchMethod"));
    }

    // Defect 8: an unknown key inside the session binding the relay reads is not repeated unless plain.
    void hostileSessionKeyIsNotRepeated_FW06()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        QVERIFY(node->session());
        const QString key = QStringLiteral("k\x1b[2J\n") + QString(5000, QLatin1Char('k'));
        QJsonObject session = node->sessionJson();
        session.insert(key, true);
        const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("session"), session}}).toJson(QJsonDocument::Compact);
        QString text;
        node->call(QStringLiteral("getRuntimeRegistryCredential"), body, [&](const peers::PeerFrame &answer) { text = answer.errorRefusal().text(); });
        QTRY_VERIFY(!text.isEmpty());
        QVERIFY2(text.contains(QStringLiteral("has a member the contract does not name")), qPrintable(text.left(300)));
        QVERIFY2(!text.contains(QStringLiteral("kkkkkkkk")), qPrintable(text.left(300)));
        QVERIFY(printable(text));
        QVERIFY(text.size() < 400);
        QCOMPARE(f.cloudly->callCount("getRuntimeRegistryCredential"), 0); // refused at the relay
    }

    // Defect 5: a 12 MiB frame from a node (refused as an unknown method, its request echoed back)
    // grows the JSON parsers of the thread that runs the relay (this one) while it is decoded, and
    // they give the memory back afterwards.
    void oversizedFrameLeavesNoParserMemory()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        auto node = f.registeredNode("node-a");
        const QByteArray pad(12 * 1024 * 1024, 'p');
        const QByteArray body = "{\"pad\":\"" + pad + "\"}";
        bool answered = false;
        node->call(QStringLiteral("noSuchMethod"), body, [&](const peers::PeerFrame &answer) { answered = answer.hasError(); });
        QTRY_VERIFY_WITH_TIMEOUT(answered, 20000);
        QVERIFY2(contract::Envelope::heldParserCapacityBytes() <= 3 * contract::Envelope::retainedParserCapacityBytes,
                 qPrintable(QString::number(contract::Envelope::heldParserCapacityBytes())));
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstPeerInputBounds)
#include "tst_peerinputbounds.moc"
