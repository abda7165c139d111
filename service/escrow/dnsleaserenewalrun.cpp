#include "service/escrow/dnsleaserenewalrun.h"

#include "shared/contract/exactkeyreader.h"
#include "shared/contract/refusalnames.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <simdjson.h>

#include <string>
#include <vector>

namespace coreflow {

using namespace contract;

namespace {
Refusal invalid(const QString &reason) { return Refusal{QString(refusal::escrowRunInvalid), reason}; }

// body with simdjson's padding behind its bytes (the bytes themselves are unchanged).
simdjson::padded_string_view padded(QByteArray &body)
{
    const qsizetype len = body.size();
    body.reserve(len + qsizetype(simdjson::SIMDJSON_PADDING));
    body.detach();
    return simdjson::padded_string_view(body.constData(), size_t(len), size_t(body.capacity()));
}

// Duplicate keys. QJsonDocument keeps the last of two equal keys and simdjson's find_field_unordered()
// the first, so a body with a duplicate key would be validated as one run and offered as another: any
// object anywhere in the request that names a key twice (after unescaping) is refused. Sets `path` to
// the first such object and `key` to the key; returns false when the body cannot be walked.
bool findDuplicateKey(simdjson::ondemand::value value, const QString &at, QString &path, QString &key);

bool findDuplicateKeyInObject(simdjson::ondemand::object object, const QString &at, QString &path, QString &key)
{
    std::vector<std::string> seen;
    for (auto field : object) {
        std::string_view name;
        if (field.unescaped_key().get(name) != simdjson::SUCCESS)
            return false;
        for (const std::string &earlier : seen) {
            if (earlier == name) {
                path = at;
                key = QString::fromUtf8(name.data(), qsizetype(name.size()));
                return true;
            }
        }
        seen.emplace_back(name);
        simdjson::ondemand::value child;
        if (field.value().get(child) != simdjson::SUCCESS)
            return false;
        if (!findDuplicateKey(child, at + QLatin1Char('.') + QString::fromUtf8(name.data(), qsizetype(name.size())), path, key))
            return false;
        if (!path.isEmpty())
            return true;
    }
    return true;
}

bool findDuplicateKey(simdjson::ondemand::value value, const QString &at, QString &path, QString &key)
{
    simdjson::ondemand::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS)
        return false;
    if (type == simdjson::ondemand::json_type::object) {
        simdjson::ondemand::object object;
        if (value.get_object().get(object) != simdjson::SUCCESS)
            return false;
        return findDuplicateKeyInObject(object, at, path, key);
    }
    if (type == simdjson::ondemand::json_type::array) {
        simdjson::ondemand::array array;
        if (value.get_array().get(array) != simdjson::SUCCESS)
            return false;
        int i = 0;
        for (auto element : array) {
            simdjson::ondemand::value child;
            if (element.get(child) != simdjson::SUCCESS)
                return false;
            if (!findDuplicateKey(child, QStringLiteral("%1[%2]").arg(at).arg(i++), path, key))
                return false;
            if (!path.isEmpty())
                return true;
        }
    }
    return true; // scalars hold no keys
}

// The problem with the request's keys, or nullopt when every object names each key once.
std::optional<QString> duplicateKeyProblem(QByteArray &body)
{
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc;
    simdjson::ondemand::object root;
    QString path, key;
    if (parser.iterate(padded(body)).get(doc) != simdjson::SUCCESS || doc.get_object().get(root) != simdjson::SUCCESS
        || !findDuplicateKeyInObject(root, QStringLiteral("request"), path, key))
        return QStringLiteral("the request cannot be read for duplicate keys");
    if (path.isEmpty())
        return std::nullopt;
    return QStringLiteral("field %1 names key %2 more than once").arg(path, key);
}

// The byte ranges of request.renewals[i], sliced without re-serialising (simdjson raw_json()). Runs
// only on a body without duplicate keys, so the array found here is the array validated.
bool sliceRenewals(QByteArray &body, QVector<DnsLeaseRenewalRun::Renewal> &renewals)
{
    const qsizetype len = body.size();
    const simdjson::padded_string_view input = padded(body);
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc;
    if (parser.iterate(input).get(doc) != simdjson::SUCCESS)
        return false;
    simdjson::ondemand::object root;
    if (doc.get_object().get(root) != simdjson::SUCCESS)
        return false;
    simdjson::ondemand::array array;
    if (root.find_field_unordered("renewals").get_array().get(array) != simdjson::SUCCESS)
        return false;
    int i = 0;
    for (auto element : array) {
        simdjson::ondemand::object o;
        if (element.get_object().get(o) != simdjson::SUCCESS)
            return false;
        std::string_view raw;
        if (o.raw_json().get(raw) != simdjson::SUCCESS)
            return false;
        if (i >= renewals.size())
            return false;
        qsizetype offset = raw.data() - body.constData();
        qsizetype size = qsizetype(raw.size());
        while (size > 0) {
            const char ch = body.at(offset + size - 1);
            if (ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t')
                break;
            --size;
        }
        if (offset < 0 || offset + size > len)
            return false;
        renewals[i].offset = qint32(offset);
        renewals[i].length = qint32(size);
        ++i;
    }
    return i == renewals.size();
}
} // namespace

Result<DnsLeaseRenewalRun> DnsLeaseRenewalRun::read(QByteArrayView rawRequest, qint64 nowMs, qint64 horizonMs, int maximumRenewals)
{
    QJsonParseError parseError{};
    const QJsonDocument doc = QJsonDocument::fromJson(rawRequest.toByteArray(), &parseError);
    if (parseError.error != QJsonParseError::NoError || !doc.isObject())
        return invalid(QStringLiteral("the request is not a JSON object"));
    // One reading for validation and slicing: a key named twice anywhere is refused before either.
    QByteArray body = rawRequest.toByteArray();
    if (auto problem = duplicateKeyProblem(body))
        return invalid(*problem);
    const QString name(refusal::escrowRunInvalid);
    ExactKeyReader r(doc.object(), QStringLiteral("request"), name);
    const QJsonObject sessionJson = r.requiredObject(QStringLiteral("session"));
    const QJsonObject projectionJson = r.requiredObject(QStringLiteral("projection"));
    const QJsonArray renewalsJson = r.requiredArray(QStringLiteral("renewals"));
    if (auto refusal = r.finish())
        return *refusal;

    DnsLeaseRenewalRun run;
    auto session = SessionBinding::read(sessionJson, QStringLiteral("request.session"));
    if (!session)
        return invalid(session.refusal().reason);
    run.m_session = session.value();
    auto projection = ProjectionReference::read(projectionJson, QStringLiteral("request.projection"), name);
    if (!projection)
        return projection.refusal();
    run.m_projection = projection.value();
    if (renewalsJson.size() > maximumRenewals)
        return invalid(QStringLiteral("field request.renewals holds %1 renewals, more than %2")
                           .arg(renewalsJson.size())
                           .arg(maximumRenewals));

    run.m_renewals.reserve(renewalsJson.size());
    const qint64 horizonEnd = nowMs + horizonMs;
    for (qsizetype i = 0; i < renewalsJson.size(); ++i) {
        const QString path = QStringLiteral("request.renewals[%1]").arg(i);
        if (!renewalsJson.at(i).isObject())
            return invalid(QStringLiteral("field %1 is not an object").arg(path));
        ExactKeyReader rr(renewalsJson.at(i).toObject(), path, name);
        const QString nodeId = rr.requiredString(QStringLiteral("nodeId"));
        const QString sessionId = rr.requiredString(QStringLiteral("sessionId"));
        const QJsonObject renewalProjection = rr.requiredObject(QStringLiteral("projection"));
        Renewal renewal;
        renewal.sequence = rr.requiredInteger(QStringLiteral("sequence"));
        renewal.notBeforeMs = rr.requiredInteger(QStringLiteral("notBefore"));
        renewal.expiresAtMs = rr.requiredInteger(QStringLiteral("expiresAt"));
        rr.requiredString(QStringLiteral("signature")); // opaque: read for its type only, never verified
        if (auto refusal = rr.finish())
            return *refusal;
        auto named = ProjectionReference::read(renewalProjection, path + QStringLiteral(".projection"), name);
        if (!named)
            return named.refusal();
        if (!(named.value() == run.m_projection))
            return invalid(QStringLiteral("field %1.projection is not the request's projection").arg(path));
        if (renewal.sequence < 0)
            return invalid(QStringLiteral("field %1.sequence is negative").arg(path));
        if (!run.m_renewals.isEmpty() && renewal.sequence <= run.m_renewals.constLast().sequence)
            return invalid(QStringLiteral("field %1.sequence does not ascend").arg(path));
        if (renewal.notBeforeMs >= renewal.expiresAtMs)
            return invalid(QStringLiteral("field %1.expiresAt is not after notBefore").arg(path));
        if (renewal.expiresAtMs - renewal.notBeforeMs > maximumWindowMs)
            return invalid(QStringLiteral("field %1 spans more than %2 ms").arg(path).arg(maximumWindowMs));
        if (renewal.expiresAtMs > horizonEnd)
            return invalid(QStringLiteral("field %1.expiresAt is beyond the escrow horizon of %2 ms").arg(path).arg(horizonMs));
        if (!run.m_scopeProblem && (nodeId != run.m_session.nodeId || sessionId != run.m_session.sessionId))
            run.m_scopeProblem = Refusal{QString(refusal::escrowRunForeignSession),
                                         QStringLiteral("renewal %1 is not in the scope of node %2's session").arg(i).arg(run.m_session.nodeId)};
        run.m_lastExpiresAtMs = qMax(run.m_lastExpiresAtMs, renewal.expiresAtMs);
        run.m_renewals.append(renewal);
    }

    run.m_body = std::move(body);
    if (!sliceRenewals(run.m_body, run.m_renewals))
        return invalid(QStringLiteral("field request.renewals cannot be sliced"));
    run.m_body.squeeze();
    run.m_renewals.squeeze();
    return run;
}

QByteArrayView DnsLeaseRenewalRun::rawRenewal(int i) const
{
    if (i < 0 || i >= m_renewals.size())
        return {};
    const Renewal &r = m_renewals.at(i);
    return QByteArrayView(m_body.constData() + r.offset, r.length);
}

QByteArray DnsLeaseRenewalRun::offerRequest(int i, const SessionBinding &current) const
{
    QByteArray out;
    const QByteArray session = Envelope::compact(current.toJson());
    const QByteArrayView renewal = rawRenewal(i);
    out.reserve(session.size() + renewal.size() + 32);
    out.append("{\"session\":").append(session).append(",\"renewal\":").append(renewal).append('}');
    return out;
}

Result<QString> DnsLeaseRenewalRun::bindAcknowledgement(int i, const QJsonObject &response) const
{
    ExactKeyReader r(response, QStringLiteral("response"));
    const QJsonObject projectionJson = r.requiredObject(QStringLiteral("projection"));
    const qint64 sequence = r.requiredInteger(QStringLiteral("sequence"));
    const QString state = r.requiredString(QStringLiteral("state"));
    if (auto refusal = r.finish())
        return *refusal;
    auto projection = ProjectionReference::read(projectionJson, QStringLiteral("response.projection"));
    if (!projection)
        return projection.refusal();
    const QString invalidName(refusal::requestInvalid);
    if (!(projection.value() == m_projection))
        return Refusal{invalidName, QStringLiteral("the acknowledgement names another projection")};
    if (i < 0 || i >= m_renewals.size() || sequence != m_renewals.at(i).sequence)
        return Refusal{invalidName, QStringLiteral("the acknowledgement names another sequence")};
    if (state != QLatin1String("admitted") && state != QLatin1String("replayed"))
        return Refusal{invalidName, QStringLiteral("field response.state is not admitted or replayed")};
    return state;
}

qsizetype DnsLeaseRenewalRun::retainedBytes() const
{
    return qsizetype(sizeof(*this)) + m_body.capacity() + m_renewals.capacity() * qsizetype(sizeof(Renewal))
           + (m_session.nodeId.capacity() + m_session.clusterId.capacity() + m_session.sessionId.capacity()
              + m_projection.id.capacity() + m_projection.digest.capacity()) * 2;
}

} // namespace coreflow
