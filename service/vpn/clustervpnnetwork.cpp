#include "service/vpn/clustervpnnetwork.h"

#include "shared/contract/exactkeyreader.h"
#include "shared/contract/ids.h"
#include "shared/contract/refusalnames.h"

#include <QJsonArray>

namespace coreflow::vpn {

using contract::ExactKeyReader;
using contract::Refusal;

namespace {

constexpr int kNoiseKeyBytes = 32;

Refusal invalid(const QString &path, const QString &problem)
{
    return Refusal{QString(contract::refusal::requestInvalid), QStringLiteral("field %1 %2").arg(path, problem)};
}

std::optional<QByteArray> strictBase64(const QString &text)
{
    const QByteArray encoded = text.toLatin1();
    auto decoded = QByteArray::fromBase64Encoding(encoded, QByteArray::AbortOnBase64DecodingErrors);
    // Canonical standard base64 with padding only (§1): re-encoding gives the text back.
    if (!decoded || text.isEmpty() || decoded.decoded.toBase64() != encoded)
        return std::nullopt;
    return decoded.decoded;
}

std::uint32_t maskOf(int length)
{
    return length == 0 ? 0 : ~std::uint32_t(0) << (32 - length);
}

std::uint64_t pairOf(int from, int to)
{
    return (std::uint64_t(std::uint32_t(from)) << 32) | std::uint32_t(to);
}

} // namespace

std::optional<std::uint32_t> ClusterVpnNetwork::parseIpv4(const QString &text)
{
    const QStringList parts = text.split(QLatin1Char('.'));
    if (parts.size() != 4)
        return std::nullopt;
    std::uint32_t address = 0;
    for (const QString &part : parts) {
        if (part.isEmpty() || part.size() > 3 || (part.size() > 1 && part.front() == QLatin1Char('0')))
            return std::nullopt;
        int value = 0;
        for (const QChar c : part) {
            if (c < QLatin1Char('0') || c > QLatin1Char('9'))
                return std::nullopt;
            value = value * 10 + (c.unicode() - '0');
        }
        if (value > 255)
            return std::nullopt;
        address = (address << 8) | std::uint32_t(value);
    }
    return address;
}

QString ClusterVpnNetwork::formatIpv4(std::uint32_t address)
{
    return QStringLiteral("%1.%2.%3.%4").arg(address >> 24).arg((address >> 16) & 0xff).arg((address >> 8) & 0xff).arg(address & 0xff);
}

contract::Result<std::optional<QJsonObject>> ClusterVpnNetwork::readCarrier(const QJsonObject &body, const QString &path, bool nullable)
{
    ExactKeyReader r(body, path);
    std::optional<QJsonObject> network = nullable ? r.nullableObject(QStringLiteral("network"))
                                                  : std::optional<QJsonObject>(r.requiredObject(QStringLiteral("network")));
    if (auto refusal = r.finish())
        return *refusal;
    return network;
}

contract::Result<ClusterVpnNetwork> ClusterVpnNetwork::read(const QJsonObject &object, const QString &path)
{
    ClusterVpnNetwork n;
    ExactKeyReader r(object, path);
    const QJsonObject authority = r.requiredObject(QStringLiteral("authority"));
    n.m_revision = r.requiredInteger(QStringLiteral("revision"));
    n.m_controlPrefix = r.requiredString(QStringLiteral("controlPrefix"));
    n.m_expiresAtMs = r.requiredInteger(QStringLiteral("expiresAt"));
    const QJsonArray members = r.requiredArray(QStringLiteral("members"));
    const QJsonArray grants = r.requiredArray(QStringLiteral("grants"));
    if (auto refusal = r.finish())
        return *refusal;

    const QString authorityPath = path + QStringLiteral(".authority");
    {
        ExactKeyReader a(authority, authorityPath);
        n.m_authorityId = a.requiredString(QStringLiteral("id"));
        n.m_authorityPublicKey = a.requiredString(QStringLiteral("publicKey"));
        if (!a.failed() && !contract::isId(n.m_authorityId))
            a.fail(QStringLiteral("id"), contract::notAnIdReason());
        if (!a.failed() && !strictBase64(n.m_authorityPublicKey))
            a.fail(QStringLiteral("publicKey"), QStringLiteral("is not non-empty base64"));
        if (auto refusal = a.finish())
            return *refusal;
    }

    struct RawMember { QString nodeId, publicKey, address; qint64 expiresAt; };
    QList<RawMember> rawMembers;
    rawMembers.reserve(members.size());
    for (qsizetype i = 0; i < members.size(); ++i) {
        const QString memberPath = QStringLiteral("%1.members[%2]").arg(path).arg(i);
        if (!members.at(i).isObject())
            return invalid(memberPath, QStringLiteral("is not an object"));
        ExactKeyReader m(members.at(i).toObject(), memberPath);
        RawMember raw{m.requiredString(QStringLiteral("nodeId")), m.requiredString(QStringLiteral("publicKey")),
                      m.requiredString(QStringLiteral("address")), m.requiredInteger(QStringLiteral("expiresAt"))};
        if (auto refusal = m.finish())
            return *refusal;
        rawMembers.append(raw);
    }
    struct RawGrant { QString from, to; };
    QList<RawGrant> rawGrants;
    rawGrants.reserve(grants.size());
    for (qsizetype i = 0; i < grants.size(); ++i) {
        const QString grantPath = QStringLiteral("%1.grants[%2]").arg(path).arg(i);
        if (!grants.at(i).isObject())
            return invalid(grantPath, QStringLiteral("is not an object"));
        ExactKeyReader g(grants.at(i).toObject(), grantPath);
        RawGrant raw{g.requiredString(QStringLiteral("from")), g.requiredString(QStringLiteral("to"))};
        if (auto refusal = g.finish())
            return *refusal;
        rawGrants.append(raw);
    }

    if (n.m_revision < 1)
        return invalid(path + QStringLiteral(".revision"), QStringLiteral("is below 1"));
    {
        const qsizetype slash = n.m_controlPrefix.indexOf(QLatin1Char('/'));
        // value_or, not the optional itself: GCC 12 at -O3 warns the optional "may be used uninitialized".
        const std::optional<std::uint32_t> parsed = slash > 0 ? parseIpv4(n.m_controlPrefix.left(slash)) : std::nullopt;
        const bool addressOk = parsed.has_value();
        const std::uint32_t addressValue = parsed.value_or(0);
        const QString lengthText = slash > 0 ? n.m_controlPrefix.mid(slash + 1) : QString();
        bool lengthOk = false;
        const int length = lengthText.toInt(&lengthOk);
        const bool plainLength = !lengthText.isEmpty() && lengthText.size() <= 2 && lengthText.front().isDigit()
            && (lengthText.size() == 1 || lengthText.front() != QLatin1Char('0'));
        if (!addressOk || !lengthOk || !plainLength || length < 1 || length > 32)
            return invalid(path + QStringLiteral(".controlPrefix"), QStringLiteral("is not an IPv4 CIDR (a.b.c.d/n, n 1..32)"));
        if ((addressValue & ~maskOf(length)) != 0)
            return invalid(path + QStringLiteral(".controlPrefix"), QStringLiteral("has host bits set"));
        n.m_prefixAddress = addressValue;
        n.m_prefixLength = length;
    }
    if (n.m_expiresAtMs < 0)
        return invalid(path + QStringLiteral(".expiresAt"), QStringLiteral("is below 0"));

    for (qsizetype i = 0; i < rawMembers.size(); ++i) {
        const RawMember &raw = rawMembers.at(i);
        const QString memberPath = QStringLiteral("%1.members[%2]").arg(path).arg(i);
        if (!contract::isId(raw.nodeId))
            return invalid(memberPath + QStringLiteral(".nodeId"), contract::notAnIdReason());
        const auto key = strictBase64(raw.publicKey);
        if (!key || key->size() != kNoiseKeyBytes)
            return invalid(memberPath + QStringLiteral(".publicKey"), QStringLiteral("is not base64 of 32 bytes"));
        const auto address = parseIpv4(raw.address);
        if (!address)
            return invalid(memberPath + QStringLiteral(".address"), QStringLiteral("is not an IPv4 literal"));
        if ((*address & maskOf(n.m_prefixLength)) != n.m_prefixAddress)
            return invalid(memberPath + QStringLiteral(".address"), QStringLiteral("lies outside controlPrefix"));
        if (raw.expiresAt < 0)
            return invalid(memberPath + QStringLiteral(".expiresAt"), QStringLiteral("is below 0"));
        const int index = int(n.m_members.size());
        if (n.m_byNodeId.contains(raw.nodeId))
            return invalid(memberPath + QStringLiteral(".nodeId"), QStringLiteral("repeats an earlier member's"));
        if (n.m_byKey.contains(*key))
            return invalid(memberPath + QStringLiteral(".publicKey"), QStringLiteral("repeats an earlier member's"));
        if (n.m_byAddress.contains(*address))
            return invalid(memberPath + QStringLiteral(".address"), QStringLiteral("repeats an earlier member's"));
        n.m_members.append(Member{raw.nodeId, *key, *address, raw.expiresAt});
        n.m_byNodeId.insert(raw.nodeId, index);
        n.m_byKey.insert(*key, index);
        n.m_byAddress.insert(*address, index);
    }
    for (qsizetype i = 0; i < rawGrants.size(); ++i) {
        const RawGrant &raw = rawGrants.at(i);
        const QString grantPath = QStringLiteral("%1.grants[%2]").arg(path).arg(i);
        const auto from = n.m_byNodeId.constFind(raw.from);
        if (from == n.m_byNodeId.cend())
            return invalid(grantPath + QStringLiteral(".from"), QStringLiteral("names no member"));
        const auto to = n.m_byNodeId.constFind(raw.to);
        if (to == n.m_byNodeId.cend())
            return invalid(grantPath + QStringLiteral(".to"), QStringLiteral("names no member"));
        n.m_grants.append(Grant{raw.from, raw.to});
        n.m_grantPairs.insert(pairOf(*from, *to));
    }
    return n;
}

const ClusterVpnNetwork::Member *ClusterVpnNetwork::memberByKey(const QByteArray &publicKey) const
{
    const auto it = m_byKey.constFind(publicKey);
    return it == m_byKey.cend() ? nullptr : &m_members.at(*it);
}

const ClusterVpnNetwork::Member *ClusterVpnNetwork::memberByAddress(std::uint32_t address) const
{
    const auto it = m_byAddress.constFind(address);
    return it == m_byAddress.cend() ? nullptr : &m_members.at(*it);
}

const ClusterVpnNetwork::Member *ClusterVpnNetwork::memberByNodeId(const QString &nodeId) const
{
    const auto it = m_byNodeId.constFind(nodeId);
    return it == m_byNodeId.cend() ? nullptr : &m_members.at(*it);
}

bool ClusterVpnNetwork::grants(const QString &fromNodeId, const QString &toNodeId) const
{
    const auto from = m_byNodeId.constFind(fromNodeId);
    const auto to = m_byNodeId.constFind(toNodeId);
    return from != m_byNodeId.cend() && to != m_byNodeId.cend() && m_grantPairs.contains(pairOf(*from, *to));
}

int ClusterVpnNetwork::indexOfNodeId(const QString &nodeId) const
{
    const auto it = m_byNodeId.constFind(nodeId);
    return it == m_byNodeId.cend() ? -1 : *it;
}

int ClusterVpnNetwork::indexOfAddress(std::uint32_t address) const
{
    const auto it = m_byAddress.constFind(address);
    return it == m_byAddress.cend() ? -1 : *it;
}

bool ClusterVpnNetwork::grantsByIndex(int from, int to) const
{
    return from >= 0 && to >= 0 && m_grantPairs.contains(pairOf(from, to));
}

bool ClusterVpnNetwork::sameContent(const ClusterVpnNetwork &other) const
{
    if (m_authorityId != other.m_authorityId || m_authorityPublicKey != other.m_authorityPublicKey
        || m_revision != other.m_revision || m_prefixAddress != other.m_prefixAddress
        || m_prefixLength != other.m_prefixLength || m_expiresAtMs != other.m_expiresAtMs
        || m_members.size() != other.m_members.size())
        return false;
    for (const Member &member : m_members) {
        const Member *theirs = other.memberByNodeId(member.nodeId);
        if (!theirs || !(*theirs == member))
            return false;
    }
    // Grants as sets of nodeId pairs.
    QSet<QPair<QString, QString>> mine, theirs;
    for (const Grant &g : m_grants)
        mine.insert({g.from, g.to});
    for (const Grant &g : other.m_grants)
        theirs.insert({g.from, g.to});
    return mine == theirs;
}

QString ClusterVpnNetwork::describe() const
{
    return QStringLiteral("revision %1 (%2 members, %3 grants)").arg(m_revision).arg(m_members.size()).arg(m_grantPairs.size());
}

} // namespace coreflow::vpn
