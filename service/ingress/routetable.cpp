#include "service/ingress/routetable.h"

#include "shared/contract/exactkeyreader.h"
#include "shared/contract/ids.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSet>
#include <string_view>

namespace coreflow {

using namespace contract;

namespace {

struct Target {
    QString nodeId;
    QString address;
    qint64 port = 0;
};

struct Route {
    QString hostname;
    QString certificateId;
    QList<Target> targets;
};

struct Certificate {
    QString id;
    QStringList hostnames;
};

QString indexed(const QString &path, const QString &member, qsizetype index)
{
    return QStringLiteral("%1.%2[%3]").arg(path, member).arg(index);
}

// Collects the first problem; every later check is skipped once one is recorded.
class FirstProblem {
public:
    explicit FirstProblem(QString name) : m_name(std::move(name)) {}
    bool failed() const { return m_refusal.has_value(); }
    void fail(const QString &field, const QString &problem)
    {
        if (!m_refusal)
            m_refusal = Refusal{m_name, QStringLiteral("field %1 %2").arg(field, problem)};
    }
    // Takes an ExactKeyReader's outcome. An unknown member is reported without its name: in a table
    // that carries private keys even a member name is material this relay does not repeat.
    void take(std::optional<Refusal> refusal, const QString &path)
    {
        if (m_refusal || !refusal)
            return;
        if (refusal->reason.endsWith(QLatin1String(" is unknown")))
            m_refusal = Refusal{m_name, RefusalQuote::unnamedMember(path)};
        else
            m_refusal = std::move(refusal);
    }
    const Refusal &refusal() const { return *m_refusal; }

private:
    QString m_name;
    std::optional<Refusal> m_refusal;
};

const QString kIdProblem = notAnIdReason();

void readTarget(const QJsonValue &value, const QString &path, Target &out, FirstProblem &problem)
{
    if (!value.isObject())
        return problem.fail(path, QStringLiteral("is not an object"));
    ExactKeyReader r(value.toObject(), path, QString(refusal::routeTableInvalid));
    out.nodeId = r.requiredString(QStringLiteral("nodeId"));
    out.address = r.requiredString(QStringLiteral("address"));
    out.port = r.requiredInteger(QStringLiteral("port"));
    if (!r.failed() && !isId(out.nodeId))
        r.fail(QStringLiteral("nodeId"), kIdProblem);
    problem.take(r.finish(), path);
}

void readRoute(const QJsonValue &value, const QString &path, Route &out, FirstProblem &problem)
{
    if (!value.isObject())
        return problem.fail(path, QStringLiteral("is not an object"));
    ExactKeyReader r(value.toObject(), path, QString(refusal::routeTableInvalid));
    out.hostname = r.requiredString(QStringLiteral("hostname"));
    out.certificateId = r.requiredString(QStringLiteral("certificateId"));
    const QJsonArray targets = r.requiredArray(QStringLiteral("targets"));
    if (!r.failed() && !isId(out.certificateId))
        r.fail(QStringLiteral("certificateId"), kIdProblem);
    problem.take(r.finish(), path);
    for (qsizetype i = 0; i < targets.size() && !problem.failed(); ++i) {
        Target target;
        readTarget(targets.at(i), indexed(path, QStringLiteral("targets"), i), target, problem);
        out.targets.append(target);
    }
}

void readCertificate(const QJsonValue &value, const QString &path, Certificate &out, FirstProblem &problem)
{
    if (!value.isObject())
        return problem.fail(path, QStringLiteral("is not an object"));
    ExactKeyReader r(value.toObject(), path, QString(refusal::routeTableInvalid));
    out.id = r.requiredString(QStringLiteral("id"));
    const QJsonArray hostnames = r.requiredArray(QStringLiteral("hostnames"));
    const QString certificatePem = r.requiredString(QStringLiteral("certificatePem"));
    const bool keyIsString = r.requiredAny(QStringLiteral("privateKeyPem")).isString();
    if (!r.failed() && !keyIsString)
        r.fail(QStringLiteral("privateKeyPem"), QStringLiteral("is not a string"));
    if (!r.failed() && !isId(out.id))
        r.fail(QStringLiteral("id"), kIdProblem);
    if (!r.failed() && certificatePem.isEmpty())
        r.fail(QStringLiteral("certificatePem"), QStringLiteral("is empty"));
    if (!r.failed() && value.toObject().value(QStringLiteral("privateKeyPem")).toString().isEmpty())
        r.fail(QStringLiteral("privateKeyPem"), QStringLiteral("is empty"));
    if (!r.failed() && hostnames.isEmpty())
        r.fail(QStringLiteral("hostnames"), QStringLiteral("is empty"));
    problem.take(r.finish(), path);
    for (qsizetype i = 0; i < hostnames.size() && !problem.failed(); ++i) {
        if (!hostnames.at(i).isString())
            problem.fail(indexed(path, QStringLiteral("hostnames"), i), QStringLiteral("is not a string"));
        else
            out.hostnames.append(hostnames.at(i).toString());
    }
}

} // namespace

bool RouteTable::isHostname(const QString &text)
{
    static const QRegularExpression label(QStringLiteral("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"));
    if (text.isEmpty() || text.size() > 253)
        return false;
    const QStringList labels = text.split(QLatin1Char('.'));
    if (labels.size() < 2)
        return false;
    for (const QString &l : labels)
        if (!label.match(l).hasMatch())
            return false;
    return true;
}

bool RouteTable::isIpv4Literal(const QString &text)
{
    static const QRegularExpression re(
        QStringLiteral("^(0|[1-9][0-9]{0,2})\\.(0|[1-9][0-9]{0,2})\\.(0|[1-9][0-9]{0,2})\\.(0|[1-9][0-9]{0,2})$"));
    const auto m = re.match(text);
    if (!m.hasMatch())
        return false;
    for (int i = 1; i <= 4; ++i)
        if (m.captured(i).toInt() > 255)
            return false;
    return true;
}

Result<std::optional<QJsonObject>> RouteTable::readCarrier(const QJsonObject &body, const QString &path, bool nullable)
{
    FirstProblem problem{QString(refusal::routeTableInvalid)};
    ExactKeyReader r(body, path, QString(refusal::routeTableInvalid));
    std::optional<QJsonObject> table;
    if (nullable)
        table = r.nullableObject(QStringLiteral("routeTable"));
    else
        table = r.requiredObject(QStringLiteral("routeTable"));
    problem.take(r.finish(), path);
    if (problem.failed())
        return problem.refusal();
    return table;
}

bool RouteTable::restoreKeys(const QList<Secret> &keys)
{
    // The material is compact JSON of the blanked table: every key is "privateKeyPem":"xx…x" (QJsonObject
    // keeps the certificates in array order, each with one such member). Nothing secret is in it yet.
    const QByteArrayView text = m_material.reveal();
    const std::string_view all(text.data(), size_t(text.size()));
    static constexpr std::string_view marker = "\"privateKeyPem\":\"";
    QList<Secret> quoted;
    QList<std::pair<size_t, size_t>> values; // [opening quote, past the closing quote)
    for (size_t at = all.find(marker); at != std::string_view::npos; at = all.find(marker, values.last().second)) {
        const size_t open = at + marker.size() - 1;
        const size_t close = all.find('"', open + 1);
        if (close == std::string_view::npos)
            return false;
        values.append({open, close + 1});
    }
    if (values.size() != keys.size())
        return false;
    for (const Secret &key : keys)
        quoted.append(key.jsonQuoted());
    QList<QByteArrayView> parts;
    size_t from = 0;
    for (qsizetype i = 0; i < values.size(); ++i) {
        parts.append(text.sliced(qsizetype(from), qsizetype(values[i].first - from)));
        parts.append(quoted.at(i).reveal());
        from = values[i].second;
    }
    parts.append(text.sliced(qsizetype(from)));
    m_material = Secret::concatenated(parts);
    return true;
}

QString RouteTable::describe() const
{
    return QStringLiteral("revision %1 (%2 routes, %3 hostnames)").arg(m_revision).arg(m_routeCount).arg(m_hostnameCount);
}

Result<RouteTable> RouteTable::read(const QJsonObject &table, const QString &path)
{
    FirstProblem problem{QString(refusal::routeTableInvalid)};

    // 1. Exact keys and types at every level, in document order.
    ExactKeyReader top(table, path, QString(refusal::routeTableInvalid));
    const QString clusterId = top.requiredString(QStringLiteral("clusterId"));
    const qint64 revision = top.requiredInteger(QStringLiteral("revision"));
    const qint64 computedAt = top.requiredInteger(QStringLiteral("computedAt"));
    const QJsonArray routeValues = top.requiredArray(QStringLiteral("routes"));
    const QJsonArray certificateValues = top.requiredArray(QStringLiteral("certificates"));
    if (!top.failed() && !isId(clusterId))
        top.fail(QStringLiteral("clusterId"), kIdProblem);
    problem.take(top.finish(), path);
    QList<Route> routes;
    for (qsizetype i = 0; i < routeValues.size() && !problem.failed(); ++i) {
        Route route;
        readRoute(routeValues.at(i), indexed(path, QStringLiteral("routes"), i), route, problem);
        routes.append(route);
    }
    QList<Certificate> certificates;
    for (qsizetype i = 0; i < certificateValues.size() && !problem.failed(); ++i) {
        Certificate certificate;
        readCertificate(certificateValues.at(i), indexed(path, QStringLiteral("certificates"), i), certificate, problem);
        certificates.append(certificate);
    }
    if (problem.failed())
        return problem.refusal();

    // 2. Revision and time.
    if (revision < 1)
        problem.fail(path + QStringLiteral(".revision"), QStringLiteral("is below 1"));
    else if (computedAt < 0)
        problem.fail(path + QStringLiteral(".computedAt"), QStringLiteral("is negative"));
    if (problem.failed())
        return problem.refusal();

    // 3. Hostnames well-formed; route hostnames unique.
    QHash<QString, qsizetype> routeByHostname;
    QSet<QString> hostnames;
    for (qsizetype i = 0; i < routes.size() && !problem.failed(); ++i) {
        const QString field = indexed(path, QStringLiteral("routes"), i) + QStringLiteral(".hostname");
        const QString &hostname = routes.at(i).hostname;
        if (!isHostname(hostname))
            problem.fail(field, QStringLiteral("is not a lowercase DNS name"));
        else if (routeByHostname.contains(hostname))
            problem.fail(field, QStringLiteral("repeats the hostname of routes[%1]").arg(routeByHostname.value(hostname)));
        routeByHostname.insert(hostname, i);
        hostnames.insert(hostname);
    }
    for (qsizetype c = 0; c < certificates.size() && !problem.failed(); ++c) {
        const QStringList &names = certificates.at(c).hostnames;
        for (qsizetype h = 0; h < names.size() && !problem.failed(); ++h) {
            if (!isHostname(names.at(h)))
                problem.fail(indexed(indexed(path, QStringLiteral("certificates"), c), QStringLiteral("hostnames"), h),
                             QStringLiteral("is not a lowercase DNS name"));
            hostnames.insert(names.at(h));
        }
    }
    if (problem.failed())
        return problem.refusal();

    // 4. Every certificateId names a certificate whose hostnames contain the route's hostname.
    QHash<QString, qsizetype> certificateById;
    for (qsizetype c = 0; c < certificates.size(); ++c)
        if (!certificateById.contains(certificates.at(c).id))
            certificateById.insert(certificates.at(c).id, c);
    for (qsizetype i = 0; i < routes.size() && !problem.failed(); ++i) {
        const Route &route = routes.at(i);
        const QString field = indexed(path, QStringLiteral("routes"), i) + QStringLiteral(".certificateId");
        const auto it = certificateById.constFind(route.certificateId);
        if (it == certificateById.constEnd())
            problem.fail(field, QStringLiteral("names no certificate"));
        else if (!certificates.at(it.value()).hostnames.contains(route.hostname))
            problem.fail(field, QStringLiteral("names certificates[%1], whose hostnames do not contain the route's hostname")
                                    .arg(it.value()));
    }
    if (problem.failed())
        return problem.refusal();

    // 5. Targets.
    for (qsizetype i = 0; i < routes.size() && !problem.failed(); ++i) {
        const QString routePath = indexed(path, QStringLiteral("routes"), i);
        const QList<Target> &targets = routes.at(i).targets;
        if (targets.isEmpty())
            problem.fail(routePath + QStringLiteral(".targets"), QStringLiteral("is empty"));
        for (qsizetype t = 0; t < targets.size() && !problem.failed(); ++t) {
            const QString targetPath = indexed(routePath, QStringLiteral("targets"), t);
            if (!isIpv4Literal(targets.at(t).address))
                problem.fail(targetPath + QStringLiteral(".address"), QStringLiteral("is not an IPv4 literal"));
            else if (targets.at(t).port < 1 || targets.at(t).port > 65535)
                problem.fail(targetPath + QStringLiteral(".port"), QStringLiteral("is not in 1..65535"));
        }
    }
    if (problem.failed())
        return problem.refusal();

    // 6. Certificate ids unique.
    QHash<QString, qsizetype> seenIds;
    for (qsizetype c = 0; c < certificates.size() && !problem.failed(); ++c) {
        const QString &id = certificates.at(c).id;
        if (seenIds.contains(id))
            problem.fail(indexed(path, QStringLiteral("certificates"), c) + QStringLiteral(".id"),
                         QStringLiteral("repeats the id of certificates[%1]").arg(seenIds.value(id)));
        seenIds.insert(id, c);
    }
    if (problem.failed())
        return problem.refusal();

    RouteTable held;
    held.m_revision = revision;
    held.m_routeCount = int(routes.size());
    held.m_hostnameCount = int(hostnames.size());
    held.m_material = Secret(QJsonDocument(table).toJson(QJsonDocument::Compact));
    return held;
}

} // namespace coreflow
