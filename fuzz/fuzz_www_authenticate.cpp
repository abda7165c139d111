// fuzz_www_authenticate: WwwAuthenticateRewriter (docs/contract.md §17, IP-08..IP-12) over any header
// values (the input's lines). One value out per challenge in; a challenge is either returned byte for
// byte or only its realm's Cloudly origin is replaced by the relay's origin, every other byte kept.
#include "service/registry/wwwauthenticaterewriter.h"

#include <cstdio>
#include <cstdlib>

using namespace coreflow;

namespace {
[[noreturn]] void broken(const char *what)
{
    std::fprintf(stderr, "fuzz_www_authenticate: %s\n", what);
    std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const QUrl cloudly(QStringLiteral("https://cloudly.example"));
    static const QUrl relay(QStringLiteral("https://relay.cluster:8443"));
    static const WwwAuthenticateRewriter rewriter(cloudly, relay);
    static const QByteArray relayOrigin = WwwAuthenticateRewriter::originString(relay).toUtf8();

    const QList<QByteArray> values = QByteArray(reinterpret_cast<const char *>(data), qsizetype(size)).split('\n');
    QList<QByteArray> challenges;
    for (const QByteArray &value : values) {
        for (const QByteArray &challenge : WwwAuthenticateRewriter::splitChallenges(value)) {
            if (!value.contains(challenge))
                broken("a challenge that is not a span of its value");
            challenges.append(challenge);
        }
    }
    const WwwAuthenticateRewrite out = rewriter.rewrite(values);
    if (out.values.size() != challenges.size())
        broken("not one value per challenge");
    for (qsizetype i = 0; i < challenges.size(); ++i) {
        const QByteArray &in = challenges.at(i);
        const QByteArray &got = out.values.at(i);
        if (got == in)
            continue;
        // Rewritten: got = in[0, p) + relayOrigin + tail, where in = in[0, p) + <Cloudly origin> + tail.
        const qsizetype p = got.indexOf(relayOrigin);
        if (p < 0 || got.left(p) != in.left(p))
            broken("a rewritten challenge that does not keep the bytes before the realm's origin");
        const QByteArray tail = got.mid(p + relayOrigin.size());
        if (!in.endsWith(tail) || in.size() - tail.size() - p <= 0)
            broken("a rewritten challenge that does not keep the bytes after the realm's origin");
        const QUrl replaced(QString::fromUtf8(in.mid(p, in.size() - tail.size() - p)));
        if (!WwwAuthenticateRewriter::sameOrigin(replaced, cloudly))
            broken("a realm rewritten whose origin is not Cloudly's");
    }
    for (const QString &origin : out.foreignRealmOrigins)
        if (WwwAuthenticateRewriter::sameOrigin(QUrl(origin), cloudly))
            broken("Cloudly's origin reported as foreign");
    return 0;
}
