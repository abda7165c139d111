#include "service/isolatedrestore/isolatedrestoreoutcome.h"

#include "service/corestore/corestoreclient.h"
#include "service/isolatedrestore/isolatedrestoreprogress.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace coreflow {

using namespace contract;

namespace {

constexpr qsizetype kGrantWindowChars = 16;

// The client's line ends in ": <class>" (Unreachable) or " answered <status>: <code>" (Refused).
QString tailOf(const QString &reason)
{
    const qsizetype at = reason.lastIndexOf(QStringLiteral(": "));
    return at < 0 ? reason : reason.mid(at + 2);
}

QString headOf(const QString &reason)
{
    const qsizetype at = reason.lastIndexOf(QStringLiteral(": "));
    return at < 0 ? reason : reason.left(at);
}

} // namespace

bool IsolatedRestoreOutcome::repeatsGrant(QStringView text, const QString &grant)
{
    if (grant.isEmpty())
        return false;
    if (text.contains(grant))
        return true;
    if (grant.size() < kGrantWindowChars)
        return false;
    for (qsizetype i = 0; i + kGrantWindowChars <= text.size(); ++i)
        if (grant.contains(text.mid(i, kGrantWindowChars)))
            return true;
    return false;
}

QString IsolatedRestoreOutcome::quotableReason(const QByteArray &errorBody, const QString &grant, const HeldToken &isHeldToken)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(errorBody, &error);
    const QJsonValue reason = document.object().value(QStringLiteral("error")).toObject().value(QStringLiteral("reason"));
    if (error.error != QJsonParseError::NoError || !reason.isString())
        return QStringLiteral("unreadable");
    const QString whole = reason.toString();
    if (isHeldToken && isHeldToken(whole.toUtf8()))
        return QStringLiteral("withheld");
    QString line = whole.left(kMaxReasonChars);
    if (line.size() == kMaxReasonChars && line.back().isHighSurrogate())
        line.chop(1);
    for (QChar &c : line)
        if (c.category() == QChar::Other_Control || c.category() == QChar::Other_Format || c == QChar::LineSeparator
            || c == QChar::ParagraphSeparator)
            c = QLatin1Char('?');
    if (repeatsGrant(whole, grant) || repeatsGrant(line, grant))
        return QStringLiteral("withheld");
    return line;
}

Result<QByteArray> IsolatedRestoreOutcome::judge(const CorestoreCallOutcome &outcome, const QString &nodeId,
                                                 const IsolatedRestoreControl &control, const HeldToken &isHeldToken)
{
    using Kind = CorestoreCallOutcome::Kind;
    switch (outcome.kind) {
    case Kind::EndpointUnknown:
        return Refusal{QString(refusal::restoreNodeNotCarried), QStringLiteral("node %1 publishes no Corestore endpoint").arg(nodeId)};
    case Kind::Credential:
        return Refusal{QString(refusal::restoreNodeUnreachable),
                       QStringLiteral("node %1: no Corestore control credential is held (%2); nothing was dialled")
                           .arg(nodeId, outcome.refusal.text())};
    case Kind::Unreachable: {
        const QString timeout = QStringLiteral("timeout after %1 ms").arg(CorestoreClient::kCallTimeoutMs);
        if (tailOf(outcome.refusal.reason) == timeout)
            return Refusal{QString(refusal::restoreNodeUnreachable),
                           QStringLiteral("%1: timed out after %2 ms; the control may have been applied — read %3")
                               .arg(headOf(outcome.refusal.reason))
                               .arg(CorestoreClient::kCallTimeoutMs)
                               .arg(QLatin1String(method::getIsolatedRestoreProgressOnNode))};
        return Refusal{QString(refusal::restoreNodeUnreachable), outcome.refusal.reason};
    }
    case Kind::Refused:
        return Refusal{QString(refusal::restoreNodeRefused), QStringLiteral("%1 %2: %3")
                                                                 .arg(outcome.status)
                                                                 .arg(tailOf(outcome.refusal.reason),
                                                                      quotableReason(outcome.body, control.grant, isHeldToken))};
    case Kind::Answered:
        break;
    }
    const auto progress = IsolatedRestoreProgress::read(outcome.body, control.restoreId, control.grant);
    if (!progress)
        return progress.refusal();
    return progress->answer(nodeId);
}

} // namespace coreflow
