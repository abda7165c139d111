#pragma once
// VpnHubScenario: what the managed VPN hub's integration tests share (docs/contract.md §11): members
// with their own Noise static keys, the ClusterVpnNetwork JSON Cloudly would push (§11.1), a relay of
// a RelayFixture configured with a hub on a free loopback UDP port, Cloudly's push of a network
// (§11.2), a simulated member dialled and handshaken (tests/peers), and the status rows (§18.1).
// Used by tst_vpnhub and tst_vpnhubcorners; the product is reached only through the running relay.
#include "tests/integration/relayfixture.h"
#include "tests/peers/peernoiseinitiator.h"
#include "tests/peers/simulatedvpnmember.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QUdpSocket>
#include <memory>

namespace coreflow::testing {

struct VpnTestMember {
    QString nodeId;
    QString address;
    QByteArray privateKey;
    QByteArray publicKey() const { return peers::PeerNoiseInitiator::publicKeyOf(privateKey); }
};

class VpnHubScenario {
public:
    using Member = VpnTestMember;

    static quint16 freeUdpPort()
    {
        QUdpSocket probe;
        probe.bind(QHostAddress::LocalHost, 0);
        return probe.localPort();
    }

    // A ClusterVpnNetwork (§11.1): every member valid for an hour unless memberExpiry says otherwise.
    static QJsonObject networkJson(qint64 revision, const QList<Member> &members, const QList<QPair<QString, QString>> &grants, qint64 nowMs,
                                   const QString &authorityId = QStringLiteral("authority-1"),
                                   const QString &prefix = QStringLiteral("100.96.0.0/16"), const QHash<QString, qint64> &memberExpiry = {})
    {
        QJsonArray membersJson;
        for (const Member &m : members)
            membersJson.append(QJsonObject{{QStringLiteral("nodeId"), m.nodeId},
                                           {QStringLiteral("publicKey"), QString::fromLatin1(m.publicKey().toBase64())},
                                           {QStringLiteral("address"), m.address},
                                           {QStringLiteral("expiresAt"), double(memberExpiry.value(m.nodeId, nowMs + 3600000))}});
        QJsonArray grantsJson;
        for (const auto &g : grants)
            grantsJson.append(QJsonObject{{QStringLiteral("from"), g.first}, {QStringLiteral("to"), g.second}});
        return QJsonObject{{QStringLiteral("authority"),
                            QJsonObject{{QStringLiteral("id"), authorityId},
                                        {QStringLiteral("publicKey"), QString::fromLatin1(QByteArray(32, 'A').toBase64())}}},
                           {QStringLiteral("revision"), double(revision)},
                           {QStringLiteral("controlPrefix"), prefix},
                           {QStringLiteral("expiresAt"), double(nowMs + 3600000)},
                           {QStringLiteral("members"), membersJson},
                           {QStringLiteral("grants"), grantsJson}};
    }

    static Member member(int i)
    {
        return Member{QStringLiteral("node-%1").arg(i), QStringLiteral("100.96.0.%1").arg(10 + i), peers::PeerNoiseInitiator::newPrivateKey()};
    }

    // The relay's configuration with a hub on 127.0.0.1:<free UDP port> (remembered in m_vpnPort).
    RelayConfiguration hubConfiguration(RelayFixture &f)
    {
        RelayConfiguration config = f.configuration();
        m_vpnPort = freeUdpPort();
        config.vpnBindHostname = QStringLiteral("127.0.0.1");
        config.vpnQuicPort = QString::number(m_vpnPort);
        config.vpnLoopbackForTests = true;
        return config;
    }

    // A relay configured with a hub; Cloudly answers getClusterVpnNetwork with `pulled` (null: none yet).
    bool startRelayWithHub(RelayFixture &f, const QJsonValue &pulled = QJsonValue(QJsonValue::Null))
    {
        answerPull(f, pulled);
        f.makeRelay(hubConfiguration(f));
        return f.startRelay();
    }

    static void answerPull(RelayFixture &f, const QJsonValue &pulled)
    {
        f.cloudly->setAnswer(QStringLiteral("getClusterVpnNetwork"), peers::Answer::respond(QJsonObject{{QStringLiteral("network"), pulled}}));
    }

    static QByteArray advertisedHubKey(RelayFixture &f)
    {
        const auto request = f.cloudly->lastRequest(QStringLiteral("registerClusterRelay"));
        if (!request)
            return {};
        const QJsonObject relay = QJsonDocument::fromJson(request->rawRequest).object().value(QStringLiteral("relay")).toObject();
        return QByteArray::fromBase64(relay.value(QStringLiteral("vpnHub")).toObject().value(QStringLiteral("publicKey")).toString().toLatin1());
    }

    // Cloudly pushes applyClusterVpnNetwork; the answer, or { refusal, text } for a refusal.
    static QJsonObject apply(RelayFixture &f, const QJsonObject &network)
    {
        const auto answer = f.dispatch(QStringLiteral("applyClusterVpnNetwork"), QJsonObject{{QStringLiteral("network"), network}});
        if (!answer)
            return {};
        if (answer->hasError())
            return QJsonObject{{QStringLiteral("refusal"), answer->errorRefusal().name}, {QStringLiteral("text"), answer->errorRefusal().text()}};
        return QJsonDocument::fromJson(answer->response.toByteArray()).object();
    }

    // A member dialled and handshaken (nullptr when the QUIC connection did not come up).
    std::unique_ptr<peers::SimulatedVpnMember> connectMember(RelayFixture &f, const Member &m)
    {
        peers::SimulatedVpnMember::Options options;
        options.hubPort = m_vpnPort;
        options.staticPrivateKey = m.privateKey;
        options.hubPublicKey = advertisedHubKey(f);
        auto peer = std::make_unique<peers::SimulatedVpnMember>(options);
        if (!peer->dial())
            return nullptr;
        if (!QTest::qWaitFor([&] { return peer->isConnected() || peer->isClosed(); }, 10000) || !peer->isConnected())
            return nullptr;
        peer->handshake();
        (void)QTest::qWaitFor([&] { return peer->isHandshakeDone() || peer->isClosed(); }, 10000);
        return peer;
    }

    static QByteArray packet(const Member &from, const Member &to, int size = 200, char fill = 'p')
    {
        return peers::SimulatedVpnMember::ipv4Packet(QHostAddress(from.address), QHostAddress(to.address), size, fill);
    }

    static status::VpnMemberStatus memberStatus(RelayFixture &f, const QString &nodeId)
    {
        for (const auto &m : f.relay->statusSnapshot().vpn.members)
            if (m.nodeId == nodeId)
                return m;
        return {};
    }

protected:
    quint16 m_vpnPort = 0;
};

} // namespace coreflow::testing
