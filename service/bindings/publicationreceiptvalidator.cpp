#include "service/bindings/publicationreceiptvalidator.h"

namespace coreflow {

namespace {

// An id as a log line may repeat it: 1..128 printable ASCII characters other than space, quote and
// backslash (ids, "corestore-publication:<operation>", hex digests); anything else by its length.
QString quoted(const QString &value)
{
    constexpr qsizetype kMaxQuoted = 128;
    bool plain = !value.isEmpty() && value.size() <= kMaxQuoted;
    for (const QChar c : value)
        plain = plain && c.unicode() > 0x20 && c.unicode() < 0x7f && c != QLatin1Char('"') && c != QLatin1Char('\\');
    return plain ? value : QStringLiteral("(a value of %1 characters)").arg(value.size());
}

} // namespace

PublicationReceiptValidator::Verdict PublicationReceiptValidator::check(const Expected &expected, const PublicationReceipt &receipt)
{
    Verdict verdict;
    const auto compare = [&verdict](const char *member, const QString &want, const QString &got, const char *reason) {
        if (want == got)
            return;
        verdict.reasons << QString::fromLatin1(reason);
        verdict.misstatements << QStringLiteral("%1 expected %2 received %3")
                                     .arg(QLatin1StringView(member), quoted(want), quoted(got));
    };
    compare("mutationId", expected.mutationId, receipt.mutationId, "the receipt names another mutation");
    compare("organizationId", expected.organizationId, receipt.organizationId, "the receipt names another organization");
    compare("clusterId", expected.clusterId, receipt.clusterId, "the receipt names another cluster");
    compare("serviceId", expected.serviceId, receipt.serviceId, "the receipt names another service");
    compare("bindingName", expected.bindingName, receipt.bindingName, "the receipt names another binding");
    compare("envelopeDigest", expected.envelopeDigest, receipt.envelopeDigest, "the receipt is for another envelope");
    return verdict;
}

} // namespace coreflow
