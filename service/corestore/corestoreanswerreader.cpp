#include "service/corestore/corestoreanswerreader.h"

#include "shared/contract/exactkeyreader.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <simdjson.h>

namespace coreflow {

using namespace contract;

namespace {

// The raw bytes of the one top-level member `key` of the JSON object in body; nullopt when it is
// missing, repeated or the body is not an object simdjson reads.
std::optional<QByteArrayView> rawTopLevelMember(const QByteArray &body, std::string_view key)
{
    simdjson::padded_string padded(body.constData(), size_t(body.size()));
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document document;
    if (parser.iterate(padded).get(document) != simdjson::SUCCESS)
        return std::nullopt;
    simdjson::ondemand::object object;
    if (document.get_object().get(object) != simdjson::SUCCESS)
        return std::nullopt;
    std::optional<QByteArrayView> found;
    for (auto field : object) {
        std::string_view name;
        if (field.unescaped_key().get(name) != simdjson::SUCCESS)
            return std::nullopt;
        simdjson::ondemand::value value;
        if (field.value().get(value) != simdjson::SUCCESS)
            return std::nullopt;
        if (name != key)
            continue;
        if (found)
            return std::nullopt; // repeated
        simdjson::ondemand::array array;
        if (value.get_array().get(array) != simdjson::SUCCESS)
            return std::nullopt;
        std::string_view raw;
        if (array.raw_json().get(raw) != simdjson::SUCCESS)
            return std::nullopt;
        // raw points into padded; map it back onto body.
        const qsizetype offset = raw.data() - padded.data();
        if (offset < 0 || offset + qsizetype(raw.size()) > body.size())
            return std::nullopt;
        QByteArrayView view(body.constData() + offset, qsizetype(raw.size()));
        while (!view.isEmpty() && (view.back() == ' ' || view.back() == '\n' || view.back() == '\r' || view.back() == '\t'))
            view.chop(1);
        found = view;
    }
    return found;
}

bool isStringArray(const QJsonArray &array)
{
    for (const QJsonValue &v : array)
        if (!v.isString())
            return false;
    return true;
}

template <typename ReadEntry>
CorestoreAnswerReader::Read readServices(const QByteArray &body, ReadEntry readEntry)
{
    CorestoreAnswerReader::Read read;
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(body, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        read.problem = QStringLiteral("the body is not a JSON object");
        return read;
    }
    ExactKeyReader r(document.object(), QStringLiteral("answer"));
    const QJsonArray services = r.requiredArray(QStringLiteral("services"));
    if (auto refused = r.finish()) {
        read.problem = refused->reason;
        return read;
    }
    for (qsizetype i = 0; i < services.size(); ++i) {
        const QString path = QStringLiteral("answer.services[%1]").arg(i);
        if (!services.at(i).isObject()) {
            read.problem = QStringLiteral("field %1 is not an object").arg(path);
            return read;
        }
        if (auto problem = readEntry(services.at(i).toObject(), path)) {
            read.problem = *problem;
            return read;
        }
    }
    const auto raw = rawTopLevelMember(body, "services");
    if (!raw) {
        read.problem = QStringLiteral("field answer.services is repeated or not readable as raw JSON");
        return read;
    }
    read.ok = true;
    read.rawServices = *raw;
    return read;
}

} // namespace

CorestoreAnswerReader::Read CorestoreAnswerReader::readInventory(const QByteArray &body)
{
    return readServices(body, [](const QJsonObject &entry, const QString &path) -> std::optional<QString> {
        ExactKeyReader e(entry, path);
        const QString serviceId = e.requiredString(QStringLiteral("serviceId"));
        for (const char *member : {"databases", "buckets", "volumes"}) {
            const QString key = QLatin1StringView(member);
            const QJsonArray list = e.requiredArray(key);
            if (!e.failed() && !isStringArray(list))
                e.fail(key, QStringLiteral("is not an array of strings"));
        }
        if (!e.failed() && serviceId.isEmpty())
            e.fail(QStringLiteral("serviceId"), QStringLiteral("is empty"));
        if (auto refused = e.finish())
            return refused->reason;
        return std::nullopt;
    });
}

CorestoreAnswerReader::Read CorestoreAnswerReader::readLegacyResources(const QByteArray &body)
{
    QSet<QString> seen;
    return readServices(body, [&seen](const QJsonObject &entry, const QString &path) -> std::optional<QString> {
        ExactKeyReader e(entry, path);
        const QString serviceId = e.requiredString(QStringLiteral("serviceId"));
        const QJsonArray resources = e.requiredArray(QStringLiteral("resources"));
        if (!e.failed() && serviceId.isEmpty())
            e.fail(QStringLiteral("serviceId"), QStringLiteral("is empty"));
        if (!e.failed() && seen.contains(serviceId))
            e.fail(QStringLiteral("serviceId"), QStringLiteral("repeats an earlier entry's"));
        if (auto refused = e.finish())
            return refused->reason;
        seen.insert(serviceId);
        for (qsizetype i = 0; i < resources.size(); ++i) {
            const QString rpath = QStringLiteral("%1.resources[%2]").arg(path).arg(i);
            if (!resources.at(i).isObject())
                return QStringLiteral("field %1 is not an object").arg(rpath);
            ExactKeyReader r(resources.at(i).toObject(), rpath);
            const QString kind = r.requiredString(QStringLiteral("kind"));
            const QString name = r.requiredString(QStringLiteral("name"));
            const qint64 createdAt = r.requiredInteger(QStringLiteral("createdAt"));
            if (!r.failed() && kind != QStringLiteral("database") && kind != QStringLiteral("bucket"))
                r.fail(QStringLiteral("kind"), QStringLiteral("is neither database nor bucket"));
            if (!r.failed() && name.isEmpty())
                r.fail(QStringLiteral("name"), QStringLiteral("is empty"));
            if (!r.failed() && createdAt < 0)
                r.fail(QStringLiteral("createdAt"), QStringLiteral("is negative"));
            if (auto refused = r.finish())
                return refused->reason;
        }
        return std::nullopt;
    });
}

} // namespace coreflow
