#include "service/isolatedrestore/isolatedrestoreprogress.h"

#include "service/isolatedrestore/jsonduplicatekeys.h"

#include "shared/contract/envelope.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/ids.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

namespace coreflow {

using namespace contract;

namespace {

const QString kInvalid = QString(refusal::restoreProgressInvalid);

Refusal invalid(const QString &reason) { return Refusal{kInvalid, reason}; }

bool repeats(const QString &text, const QString &grant) { return !grant.isEmpty() && text.contains(grant); }

} // namespace

Result<IsolatedRestoreProgress> IsolatedRestoreProgress::read(const QByteArray &corestoreBody, const QString &restoreId,
                                                              const QString &grant)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(corestoreBody, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        return invalid(QStringLiteral("the node's answer is not a JSON object"));
    static const QSet<QString> nameable{QStringLiteral("restoreId"),      QStringLiteral("revision"),         QStringLiteral("phase"),
                                        QStringLiteral("stagedObject"),   QStringLiteral("updatedAt"),        QStringLiteral("failure"),
                                        QStringLiteral("receivedObject"), QStringLiteral("restoredMappings"), QStringLiteral("deletedStaging"),
                                        QStringLiteral("key"),            QStringLiteral("nextOffset"),       QStringLiteral("sizeBytes")};
    const JsonDuplicateKeys::Finding keys = JsonDuplicateKeys::find(corestoreBody, QStringLiteral("answer"), nameable);
    if (keys.verdict == JsonDuplicateKeys::Verdict::Unreadable)
        return invalid(QStringLiteral("the node's answer is not one readable JSON object"));
    if (keys.verdict == JsonDuplicateKeys::Verdict::Duplicate)
        return invalid(QStringLiteral("field %1 names a key more than once").arg(keys.path));
    QJsonObject body = document.object();
    if (body.contains(QStringLiteral("nodeId")))
        return invalid(QStringLiteral("the node's answer states a nodeId of its own"));
    static const QSet<QString> known{QStringLiteral("restoreId"),      QStringLiteral("revision"),         QStringLiteral("phase"),
                                     QStringLiteral("stagedObject"),   QStringLiteral("updatedAt"),        QStringLiteral("failure"),
                                     QStringLiteral("receivedObject"), QStringLiteral("restoredMappings"), QStringLiteral("deletedStaging")};
    for (auto it = body.begin(); it != body.end(); ++it)
        if (!known.contains(it.key()))
            return invalid(RefusalQuote::unnamedMember(QStringLiteral("answer")));
    // Corestore's receipts of what the route did are not the relay's to pass on (IR-15).
    body.remove(QStringLiteral("receivedObject"));
    body.remove(QStringLiteral("restoredMappings"));
    body.remove(QStringLiteral("deletedStaging"));

    ExactKeyReader r(body, QStringLiteral("answer"), kInvalid);
    IsolatedRestoreProgress out;
    out.restoreId = r.requiredString(QStringLiteral("restoreId"));
    out.revision = r.requiredInteger(QStringLiteral("revision"));
    out.phase = r.requiredString(QStringLiteral("phase"));
    const std::optional<QJsonObject> staged = r.nullableObject(QStringLiteral("stagedObject"));
    out.updatedAtMs = r.requiredInteger(QStringLiteral("updatedAt"));
    const QJsonValue failure = r.requiredAny(QStringLiteral("failure"));
    if (!r.failed() && !failure.isNull() && !failure.isString())
        r.fail(QStringLiteral("failure"), QStringLiteral("is not a string or null"));
    if (auto refused = r.finish())
        return *refused;
    if (!isId(out.restoreId))
        return invalid(QStringLiteral("field answer.restoreId %1").arg(notAnIdReason()));
    if (out.restoreId != restoreId)
        return invalid(QStringLiteral("field answer.restoreId names another restore than the control's"));
    if (out.revision < 0)
        return invalid(QStringLiteral("field answer.revision is negative"));
    static const QSet<QString> phases{QStringLiteral("prepared"), QStringLiteral("staging"),  QStringLiteral("staged"),
                                      QStringLiteral("executing"), QStringLiteral("restored"), QStringLiteral("failed"),
                                      QStringLiteral("cleaned")};
    if (!phases.contains(out.phase))
        return invalid(QStringLiteral("field answer.phase is not one of prepared, staging, staged, executing, restored, failed, cleaned"));
    if (staged) {
        for (auto it = staged->begin(); it != staged->end(); ++it)
            if (it.key() != QLatin1String("key") && it.key() != QLatin1String("nextOffset") && it.key() != QLatin1String("sizeBytes"))
                return invalid(RefusalQuote::unnamedMember(QStringLiteral("answer.stagedObject")));
        ExactKeyReader s(*staged, QStringLiteral("answer.stagedObject"), kInvalid);
        StagedObject object;
        object.key = s.requiredString(QStringLiteral("key"));
        object.nextOffset = s.requiredInteger(QStringLiteral("nextOffset"));
        object.sizeBytes = s.requiredInteger(QStringLiteral("sizeBytes"));
        if (auto refused = s.finish())
            return *refused;
        if (!isId(object.key))
            return invalid(QStringLiteral("field answer.stagedObject.key %1").arg(notAnIdReason()));
        if (object.nextOffset < 0 || object.sizeBytes < object.nextOffset)
            return invalid(QStringLiteral("field answer.stagedObject.nextOffset is not between 0 and sizeBytes"));
        if (repeats(object.key, grant))
            return invalid(QStringLiteral("field answer.stagedObject.key repeats the control's grant"));
        out.stagedObject = object;
    }
    if (failure.isString()) {
        out.failure = failure.toString();
        if (repeats(*out.failure, grant))
            return invalid(QStringLiteral("field answer.failure repeats the control's grant"));
    }
    return out;
}

QByteArray IsolatedRestoreProgress::answer(const QString &nodeId) const
{
    QByteArray out = QByteArrayLiteral("{\"nodeId\":") + Envelope::jsonString(nodeId) + QByteArrayLiteral(",\"restoreId\":")
        + Envelope::jsonString(restoreId) + QByteArrayLiteral(",\"revision\":") + QByteArray::number(revision)
        + QByteArrayLiteral(",\"phase\":") + Envelope::jsonString(phase) + QByteArrayLiteral(",\"stagedObject\":");
    if (stagedObject)
        out += QByteArrayLiteral("{\"key\":") + Envelope::jsonString(stagedObject->key) + QByteArrayLiteral(",\"nextOffset\":")
            + QByteArray::number(stagedObject->nextOffset) + QByteArrayLiteral(",\"sizeBytes\":")
            + QByteArray::number(stagedObject->sizeBytes) + '}';
    else
        out += QByteArrayLiteral("null");
    out += QByteArrayLiteral(",\"updatedAt\":") + QByteArray::number(updatedAtMs) + QByteArrayLiteral(",\"failure\":")
        + (failure ? Envelope::jsonString(*failure) : QByteArrayLiteral("null")) + '}';
    return out;
}

} // namespace coreflow
