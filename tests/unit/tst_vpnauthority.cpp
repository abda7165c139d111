// The managed VPN hub's authority (docs/contract.md §11.1, §11.2) and forwarding rule (§11.5):
// ClusterVpnNetwork's exact-key reader, VpnNetworkAuthority's admission on the injected clock, and
// VpnPacketPolicy's drops by cause. Rule ids: VH-03, VH-08, VH-09, VH-10, VH-11, VH-12, VH-13, VH-14,
// VH-17, VH-19, VH-21.
#include "service/vpn/clustervpnnetwork.h"
#include "service/vpn/vpnnetworkauthority.h"
#include "service/vpn/vpnpacketpolicy.h"
#include "service/vpn/vpnqueuebudget.h"
#include "shared/contract/refusalnames.h"
#include "shared/util/manualclock.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QtEndian>

using namespace coreflow;
using namespace coreflow::vpn;

namespace {

constexpr qint64 kStart = 1'700'000'000'000;

QString keyOf(char fill) { return QString::fromLatin1(QByteArray(32, fill).toBase64()); }

QJsonObject member(const QString &nodeId, char keyFill, const QString &address, qint64 expiresAt = kStart + 3'600'000)
{
    return QJsonObject{{"nodeId", nodeId}, {"publicKey", keyOf(keyFill)}, {"address", address}, {"expiresAt", expiresAt}};
}

QJsonObject grant(const QString &from, const QString &to) { return QJsonObject{{"from", from}, {"to", to}}; }

// Three members a, b, c; grants a→b and b→a (c is granted nothing).
QJsonObject network(qint64 revision = 1)
{
    return QJsonObject{
        {"authority", QJsonObject{{"id", "cloudly-authority-1"}, {"publicKey", keyOf('A')}}},
        {"revision", revision},
        {"controlPrefix", "100.96.0.0/16"},
        {"expiresAt", kStart + 7'200'000},
        {"members", QJsonArray{member("node-a", 'a', "100.96.0.2"), member("node-b", 'b', "100.96.0.3"),
                               member("node-c", 'c', "100.96.0.4", kStart + 60'000)}},
        {"grants", QJsonArray{grant("node-a", "node-b"), grant("node-b", "node-a")}}};
}

ClusterVpnNetwork read(const QJsonObject &o)
{
    auto result = ClusterVpnNetwork::read(o, QStringLiteral("request.network"));
    if (!result)
        qFatal("network not read: %s", qPrintable(result.refusal().text()));
    return std::move(result).value();
}

QString refusalOf(const QJsonObject &o)
{
    auto result = ClusterVpnNetwork::read(o, QStringLiteral("request.network"));
    return result ? QString() : result.refusal().text();
}

QByteArray ipv4(const QString &source, const QString &destination, int totalBytes = 40)
{
    QByteArray packet(totalBytes, '\0');
    auto *b = reinterpret_cast<uchar *>(packet.data());
    b[0] = 0x45;
    qToBigEndian<quint16>(quint16(totalBytes), b + 2);
    b[8] = 64;
    b[9] = 17;
    qToBigEndian<quint32>(*ClusterVpnNetwork::parseIpv4(source), b + 12);
    qToBigEndian<quint32>(*ClusterVpnNetwork::parseIpv4(destination), b + 16);
    return packet;
}

} // namespace

class TestVpnAuthority : public QObject {
    Q_OBJECT
private slots:
    // §11.1 / VH-03 / VH-21: what is held is public keys, Unix-ms expiries and presence-only members.
    void readsTheContractShape()
    {
        const ClusterVpnNetwork n = read(network());
        QCOMPARE(n.revision(), 1);
        QCOMPARE(n.prefixLength(), 16);
        QCOMPARE(ClusterVpnNetwork::formatIpv4(n.prefixAddress()), QStringLiteral("100.96.0.0"));
        QCOMPARE(n.members().size(), 3);
        QCOMPARE(n.memberByKey(QByteArray(32, 'b'))->nodeId, QStringLiteral("node-b"));
        QCOMPARE(n.memberByAddress(*ClusterVpnNetwork::parseIpv4("100.96.0.4"))->expiresAtMs, kStart + 60'000);
        QVERIFY(n.grants("node-a", "node-b"));
        QVERIFY(!n.grants("node-a", "node-c"));
        QVERIFY(!n.grants("node-c", "node-a"));
        QCOMPARE(n.describe(), QStringLiteral("revision 1 (3 members, 2 grants)"));
        const auto carried = ClusterVpnNetwork::readCarrier(QJsonObject{{"network", QJsonValue::Null}}, "response", true);
        QVERIFY(carried.ok() && !carried.value().has_value());
        QVERIFY(!ClusterVpnNetwork::readCarrier(QJsonObject{{"network", QJsonValue::Null}}, "request", false).ok());
        QVERIFY(!ClusterVpnNetwork::readCarrier(QJsonObject{{"network", network()}, {"extra", 1}}, "request", false).ok());
    }

    void refusesByPathNeverByValue_data()
    {
        QTest::addColumn<QJsonObject>("body");
        QTest::addColumn<QString>("expected");
        auto with = [](const char *key, const QJsonValue &v) { QJsonObject o = network(); o.insert(key, v); return o; };
        auto withMember = [](int i, const char *key, const QJsonValue &v) {
            QJsonObject o = network();
            QJsonArray members = o.value("members").toArray();
            QJsonObject m = members.at(i).toObject();
            m.insert(key, v);
            members.replace(i, m);
            o.insert("members", members);
            return o;
        };
        QJsonObject unknownKey = network();
        unknownKey.insert("enabled", true);   // VH-21: no enabled flag in the contract's shape
        QTest::newRow("unknown key") << unknownKey << "request-invalid: field request.network.enabled is unknown";
        QJsonObject missing = network();
        missing.remove("grants");
        QTest::newRow("missing grants") << missing << "request-invalid: field request.network.grants is missing";
        QTest::newRow("revision 0") << with("revision", 0) << "request-invalid: field request.network.revision is below 1";
        QTest::newRow("iso expiry") << with("expiresAt", "2026-12-01T00:00:00Z") << "request-invalid: field request.network.expiresAt is not an integer";
        QTest::newRow("prefix host bits") << with("controlPrefix", "100.96.0.1/16") << "request-invalid: field request.network.controlPrefix has host bits set";
        QTest::newRow("prefix form") << with("controlPrefix", "100.96.0.0/016") << "request-invalid: field request.network.controlPrefix is not an IPv4 CIDR (a.b.c.d/n, n 1..32)";
        QTest::newRow("prefix v6") << with("controlPrefix", "fd00::/8") << "request-invalid: field request.network.controlPrefix is not an IPv4 CIDR (a.b.c.d/n, n 1..32)";
        QTest::newRow("short key") << withMember(1, "publicKey", QString::fromLatin1(QByteArray(31, 'x').toBase64()))
                                   << "request-invalid: field request.network.members[1].publicKey is not base64 of 32 bytes";
        QTest::newRow("outside prefix") << withMember(0, "address", "100.97.0.2")
                                        << "request-invalid: field request.network.members[0].address lies outside controlPrefix";
        QTest::newRow("leading zero") << withMember(0, "address", "100.96.0.02")
                                      << "request-invalid: field request.network.members[0].address is not an IPv4 literal";
        QTest::newRow("repeated address") << withMember(2, "address", "100.96.0.2")
                                          << "request-invalid: field request.network.members[2].address repeats an earlier member's";
        QTest::newRow("repeated key") << withMember(2, "publicKey", keyOf('a'))
                                      << "request-invalid: field request.network.members[2].publicKey repeats an earlier member's";
        QTest::newRow("repeated node") << withMember(2, "nodeId", "node-a")
                                       << "request-invalid: field request.network.members[2].nodeId repeats an earlier member's";
        QTest::newRow("private key") << withMember(0, "privateKey", keyOf('p'))
                                     << "request-invalid: field request.network.members[0].privateKey is unknown";
        QJsonObject strayGrant = network();
        strayGrant.insert("grants", QJsonArray{grant("node-a", "node-z")});
        QTest::newRow("grant to no member") << strayGrant << "request-invalid: field request.network.grants[0].to names no member";
    }
    void refusesByPathNeverByValue()
    {
        QFETCH(QJsonObject, body);
        QFETCH(QString, expected);
        QCOMPARE(refusalOf(body), expected);
    }

    // §11.2: VH-08 (whole authority), VH-09 (replay), VH-10 (later revision), VH-11/VH-12 (foreign,
    // moved prefix), VH-13 (stale), VH-14 (refusal applies nothing).
    void admissionRules()
    {
        ManualClock clock(kStart);
        VpnNetworkAuthority authority(clock);
        QVERIFY(!authority.heldRevision());
        auto first = authority.admit(read(network(3)));
        QVERIFY(first.ok());
        QCOMPARE(first.value().state, VpnNetworkAuthority::State::Applied);
        QVERIFY(first.value().firstNetwork);

        auto replay = authority.admit(read(network(3)));
        QCOMPARE(replay.value().state, VpnNetworkAuthority::State::Replayed);
        QVERIFY(replay.value().withdrawnNodeIds.isEmpty());
        QVERIFY(!replay.value().firstNetwork);

        auto expectRefusal = [&](const QJsonObject &body, const char *name, const QString &reason) {
            auto outcome = authority.admit(read(body));
            QVERIFY(!outcome.ok());
            QCOMPARE(outcome.refusal().name, QString::fromLatin1(name));
            QCOMPARE(outcome.refusal().reason, reason);
            QCOMPARE(authority.heldRevision(), std::optional<qint64>(3));
            QVERIFY(authority.held()->sameContent(read(network(3))));
        };
        QJsonObject otherAuthority = network(4);
        otherAuthority.insert("authority", QJsonObject{{"id", "cloudly-authority-2"}, {"publicKey", keyOf('A')}});
        expectRefusal(otherAuthority, "vpn-network-authority-foreign", "authority.id differs from the held network's");
        QJsonObject otherKey = network(4);
        otherKey.insert("authority", QJsonObject{{"id", "cloudly-authority-1"}, {"publicKey", keyOf('B')}});
        expectRefusal(otherKey, "vpn-network-authority-foreign", "authority.publicKey differs from the held network's");
        QJsonObject moved = network(4);
        moved.insert("controlPrefix", "100.64.0.0/10");
        QJsonArray movedMembers;
        movedMembers.append(member("node-a", 'a', "100.96.0.2"));
        moved.insert("members", movedMembers);
        moved.insert("grants", QJsonArray{});
        expectRefusal(moved, "vpn-network-authority-foreign", "controlPrefix differs from the held network's");
        expectRefusal(network(2), "vpn-network-revision-stale", "revision 2 is behind the held 3");
        QJsonObject sameRevisionOtherContent = network(3);
        sameRevisionOtherContent.insert("grants", QJsonArray{});
        expectRefusal(sameRevisionOtherContent, "vpn-network-revision-stale", "revision 3 is behind the held 3");

        // VH-08: a later revision leaving out node-b and re-keying node-c withdraws both.
        QJsonObject next = network(4);
        next.insert("members", QJsonArray{member("node-a", 'a', "100.96.0.2"), member("node-c", 'C', "100.96.0.4")});
        next.insert("grants", QJsonArray{grant("node-a", "node-c")});
        auto later = authority.admit(read(next));
        QVERIFY(later.ok());
        QCOMPARE(later.value().state, VpnNetworkAuthority::State::Applied);
        QCOMPARE(later.value().withdrawnNodeIds, (QStringList{"node-b", "node-c"}));
        QVERIFY(!authority.held()->grants("node-a", "node-b"));
        QVERIFY(authority.held()->grants("node-a", "node-c"));
        QCOMPARE(authority.heldRevision(), std::optional<qint64>(4));

        // VH-17 / VH-19: nothing outlives the hub; the next network is a first one again.
        authority.clear();
        QVERIFY(!authority.held());
        auto afresh = authority.admit(read(network(1)));
        QVERIFY(afresh.ok() && afresh.value().firstNetwork);
    }

    // §11.1: a member stops at its expiresAt, the whole network at the network's, on the injected clock.
    void expiriesOnTheInjectedClock()
    {
        ManualClock clock(kStart);
        VpnNetworkAuthority authority(clock);
        QVERIFY(authority.admit(read(network())).ok());
        QVERIFY(authority.liveMemberByNodeId("node-c"));
        QCOMPARE(authority.nextExpiryMs(), kStart + 60'000);
        clock.advance(59'999);
        QVERIFY(authority.liveMemberByKey(QByteArray(32, 'c')));
        clock.advance(1);
        QVERIFY(!authority.liveMemberByKey(QByteArray(32, 'c')));
        QVERIFY(!authority.liveMemberByAddress(*ClusterVpnNetwork::parseIpv4("100.96.0.4")));
        QVERIFY(authority.liveMemberByNodeId("node-a"));
        QCOMPARE(authority.nextExpiryMs(), kStart + 3'600'000);
        clock.advance(7'200'000 - 60'000);
        QVERIFY(!authority.networkLive());
        QVERIFY(!authority.liveMemberByNodeId("node-a"));
        QCOMPARE(authority.nextExpiryMs(), -1);
    }

    // §11.5: forward only from a live member's own address to a granted live member; drops by cause.
    void packetPolicyDropsByCause()
    {
        ManualClock clock(kStart);
        VpnNetworkAuthority authority(clock);
        QVERIFY(authority.admit(read(network())).ok());
        VpnPacketPolicy policy(authority);
        const VpnPacketPolicy::DatagramLimit limit = [](int) { return qsizetype(1200); };
        using V = VpnPacketPolicy::Verdict;
        // The hub names the sender by its index in the held network, resolved from its nodeId.
        auto indexOf = [&](const QString &nodeId) { return authority.held()->indexOfNodeId(nodeId); };
        auto judge = [&](const QString &sender, const QByteArray &packet) { return policy.judge(indexOf(sender), packet, limit).verdict; };

        const auto forwarded = policy.judge(indexOf("node-a"), ipv4("100.96.0.2", "100.96.0.3"), limit);
        QCOMPARE(forwarded.verdict, V::Forward);
        QCOMPARE(forwarded.destination->nodeId, QStringLiteral("node-b"));
        QCOMPARE(judge("node-b", ipv4("100.96.0.3", "100.96.0.2")), V::Forward);
        QCOMPARE(judge("node-a", ipv4("100.96.0.3", "100.96.0.3")), V::SpoofedSource);
        QCOMPARE(judge("node-a", ipv4("100.96.0.2", "100.96.0.4")), V::UngrantedPair);
        QCOMPARE(judge("node-c", ipv4("100.96.0.4", "100.96.0.2")), V::UngrantedPair);
        QCOMPARE(judge("node-a", ipv4("100.96.0.2", "100.96.0.9")), V::UnknownDestination);
        QCOMPARE(judge("node-a", ipv4("100.96.0.2", "8.8.8.8")), V::UnknownDestination);
        QCOMPARE(judge("node-z", ipv4("100.96.0.9", "100.96.0.2")), V::SenderNotAdmitted);
        QByteArray v6 = ipv4("100.96.0.2", "100.96.0.3");
        v6[0] = char(0x60);
        QCOMPARE(judge("node-a", v6), V::NotIpv4);
        QCOMPARE(judge("node-a", QByteArray(19, 'x')), V::NotIpv4);
        QByteArray lengthLies = ipv4("100.96.0.2", "100.96.0.3");
        lengthLies.append('x');   // two packets' worth or trailing bytes: not exactly one
        QCOMPARE(judge("node-a", lengthLies), V::NotIpv4);
        QCOMPARE(judge("node-a", ipv4("100.96.0.2", "100.96.0.3", 1176)), V::Forward);        // 1176 + 24 = 1200
        QCOMPARE(judge("node-a", ipv4("100.96.0.2", "100.96.0.3", 1177)), V::DatagramTooLarge);

        QCOMPARE(policy.count(V::Forward), quint64(3));
        QCOMPARE(policy.count(V::SpoofedSource), quint64(1));
        QCOMPARE(policy.count(V::UngrantedPair), quint64(2));
        QCOMPARE(policy.count(V::UnknownDestination), quint64(2));
        QCOMPARE(policy.count(V::SenderNotAdmitted), quint64(1));
        QCOMPARE(policy.count(V::NotIpv4), quint64(3));
        QCOMPARE(policy.count(V::DatagramTooLarge), quint64(1));
        QCOMPARE(VpnPacketPolicy::verdictName(V::UngrantedPair), QStringLiteral("ungranted-pair"));

        // A withdrawn or expired member neither sends nor receives.
        QJsonObject next = network(2);
        next.insert("members", QJsonArray{member("node-a", 'a', "100.96.0.2"), member("node-c", 'c', "100.96.0.4")});
        next.insert("grants", QJsonArray{grant("node-a", "node-c")});
        QVERIFY(authority.admit(read(next)).ok());
        QCOMPARE(judge("node-a", ipv4("100.96.0.2", "100.96.0.3")), V::UnknownDestination);
        QCOMPARE(judge("node-b", ipv4("100.96.0.3", "100.96.0.2")), V::SenderNotAdmitted);
        QCOMPARE(judge("node-a", ipv4("100.96.0.2", "100.96.0.4")), V::Forward);
        clock.advance(3'600'000);
        QCOMPARE(judge("node-a", ipv4("100.96.0.2", "100.96.0.4")), V::SenderNotAdmitted);
    }

    // Issue 21: the policy's integer keys. A sender is its index into the held network's members(),
    // addresses are looked up as quint32 and grants as index pairs; the drops by cause are those of
    // the nodeId-keyed rule (spoofed source, ungranted pair, unknown destination, not IPv4 first), an
    // index that names no member is sender-not-admitted, and the datagram limit is asked for the
    // destination's index.
    void packetPolicyJudgesByMemberIndex()
    {
        ManualClock clock(kStart);
        VpnNetworkAuthority authority(clock);
        QVERIFY(authority.admit(read(network())).ok());
        const ClusterVpnNetwork &held = *authority.held();
        QCOMPARE(held.indexOfNodeId("node-a"), 0);
        QCOMPARE(held.indexOfNodeId("node-b"), 1);
        QCOMPARE(held.indexOfNodeId("node-c"), 2);
        QCOMPARE(held.indexOfNodeId("node-z"), -1);
        QCOMPARE(held.indexOfAddress(*ClusterVpnNetwork::parseIpv4("100.96.0.3")), 1);
        QCOMPARE(held.indexOfAddress(*ClusterVpnNetwork::parseIpv4("100.96.0.9")), -1);
        QVERIFY(held.grantsByIndex(0, 1));
        QVERIFY(held.grantsByIndex(1, 0));
        QVERIFY(!held.grantsByIndex(0, 2));
        QVERIFY(!held.grantsByIndex(2, 0));
        QVERIFY(!held.grantsByIndex(-1, 1));
        QVERIFY(!held.grantsByIndex(0, -1));

        VpnPacketPolicy policy(authority);
        QList<int> asked;
        const VpnPacketPolicy::DatagramLimit limit = [&asked](int destination) {
            asked.append(destination);
            return qsizetype(1200);
        };
        using V = VpnPacketPolicy::Verdict;
        const auto forwarded = policy.judge(0, ipv4("100.96.0.2", "100.96.0.3"), limit);
        QCOMPARE(forwarded.verdict, V::Forward);
        QCOMPARE(forwarded.destinationIndex, 1);
        QCOMPARE(forwarded.destination->nodeId, QStringLiteral("node-b"));
        QCOMPARE(asked, QList<int>{1});
        auto judge = [&](int sender, const QByteArray &packet) {
            const auto d = policy.judge(sender, packet, limit);
            if (d.verdict != V::Forward)
                [&] { QCOMPARE(d.destinationIndex, -1); QVERIFY(!d.destination); }();
            return d.verdict;
        };
        QCOMPARE(judge(1, ipv4("100.96.0.3", "100.96.0.2")), V::Forward);
        // Spoofed source: a's index with b's address, b's index with a's address.
        QCOMPARE(judge(0, ipv4("100.96.0.3", "100.96.0.3")), V::SpoofedSource);
        QCOMPARE(judge(1, ipv4("100.96.0.2", "100.96.0.3")), V::SpoofedSource);
        // Ungranted pair, both ways.
        QCOMPARE(judge(0, ipv4("100.96.0.2", "100.96.0.4")), V::UngrantedPair);
        QCOMPARE(judge(2, ipv4("100.96.0.4", "100.96.0.2")), V::UngrantedPair);
        // Unknown destination: inside the prefix, outside it.
        QCOMPARE(judge(0, ipv4("100.96.0.2", "100.96.0.9")), V::UnknownDestination);
        QCOMPARE(judge(0, ipv4("100.96.0.2", "8.8.8.8")), V::UnknownDestination);
        // An index that names no member.
        QCOMPARE(judge(-1, ipv4("100.96.0.2", "100.96.0.3")), V::SenderNotAdmitted);
        QCOMPARE(judge(3, ipv4("100.96.0.2", "100.96.0.3")), V::SenderNotAdmitted);
        // Not IPv4 is checked before the sender, whatever index comes with it.
        QByteArray v6 = ipv4("100.96.0.2", "100.96.0.3");
        v6[0] = char(0x60);
        QCOMPARE(judge(0, v6), V::NotIpv4);
        QCOMPARE(judge(-1, v6), V::NotIpv4);
        QCOMPARE(judge(0, QByteArray(19, 'x')), V::NotIpv4);
        QCOMPARE(judge(0, ipv4("100.96.0.2", "100.96.0.3", 1177)), V::DatagramTooLarge);
        QCOMPARE(asked, (QList<int>{1, 0, 1})); // asked only for packets that passed every other check
        QCOMPARE(policy.count(V::Forward), quint64(2));
        QCOMPARE(policy.count(V::SpoofedSource), quint64(2));
        QCOMPARE(policy.count(V::UngrantedPair), quint64(2));
        QCOMPARE(policy.count(V::UnknownDestination), quint64(2));
        QCOMPARE(policy.count(V::SenderNotAdmitted), quint64(2));
        QCOMPARE(policy.count(V::NotIpv4), quint64(3));
        QCOMPARE(policy.count(V::DatagramTooLarge), quint64(1));

        // c's credential ends: as a destination it is unknown (no longer ungranted), as a sender not
        // admitted; a and b go on.
        clock.advance(60'000);
        QCOMPARE(judge(0, ipv4("100.96.0.2", "100.96.0.4")), V::UnknownDestination);
        QCOMPARE(judge(2, ipv4("100.96.0.4", "100.96.0.2")), V::SenderNotAdmitted);
        QCOMPARE(judge(0, ipv4("100.96.0.2", "100.96.0.3")), V::Forward);

        // A later revision lists the members in another order: the indices are the new network's.
        QJsonObject next = network(2);
        next.insert("members", QJsonArray{member("node-b", 'b', "100.96.0.3"), member("node-a", 'a', "100.96.0.2")});
        next.insert("grants", QJsonArray{grant("node-a", "node-b")});
        QVERIFY(authority.admit(read(next)).ok());
        QCOMPARE(authority.held()->indexOfNodeId("node-a"), 1);
        QCOMPARE(judge(1, ipv4("100.96.0.2", "100.96.0.3")), V::Forward);
        QCOMPARE(judge(0, ipv4("100.96.0.2", "100.96.0.3")), V::SpoofedSource); // index 0 is b now
        QCOMPARE(judge(0, ipv4("100.96.0.3", "100.96.0.2")), V::UngrantedPair);  // b -> a left out
    }

    // §11.8 Bounds, the numbers the contract states: a sixteenth of the cgroup's memory, half in
    // connections at 128 KiB (16..4096), half in 1500-byte queued datagrams per connection (16..1024).
    void queueBoundsFromTheCgroupLimit()
    {
        const qint64 gib = qint64(1) << 30;
        auto limits = VpnQueueBudget::limitsFor(gib); // also what "no limit" counts as
        QCOMPARE(limits.maxConnections, 512);
        QCOMPARE(limits.maxQueuedDatagrams, 43);
        limits = VpnQueueBudget::limitsFor(4 * gib);
        QCOMPARE(limits.maxConnections, 2048);
        QCOMPARE(limits.maxQueuedDatagrams, 43);
        limits = VpnQueueBudget::limitsFor(64 * gib);
        QCOMPARE(limits.maxConnections, 4096);            // the upper bound
        QCOMPARE(limits.maxQueuedDatagrams, 349);
        limits = VpnQueueBudget::limitsFor(1024 * gib);
        QCOMPARE(limits.maxQueuedDatagrams, 1024);        // the upper bound
        limits = VpnQueueBudget::limitsFor(1024 * 1024);
        QCOMPARE(limits.maxConnections, 16);              // the lower bounds
        QCOMPARE(limits.maxQueuedDatagrams, 16);
        limits = VpnQueueBudget::limitsFor(-1);
        QCOMPARE(limits.maxConnections, 16);
        QCOMPARE(limits.maxQueuedDatagrams, 16);
        QVERIFY(VpnQueueBudget::memoryLimitBytes() > 0);
    }
};

QTEST_GUILESS_MAIN(TestVpnAuthority)
#include "tst_vpnauthority.moc"
