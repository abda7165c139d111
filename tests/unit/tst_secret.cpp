// Secret: cannot be printed, logged or put into an error (DEVELOPERS.md "Secrets"; OV-08).
#include "shared/secret.h"

#include <QTest>
#include <type_traits>

using coreflow::Secret;

// Compile-time proof: no conversion from Secret to anything printable.
static_assert(!std::is_convertible_v<Secret, QString>);
static_assert(!std::is_convertible_v<Secret, QByteArray>);
static_assert(!std::is_convertible_v<Secret, const char *>);
static_assert(!std::is_constructible_v<QString, Secret>);

class TstSecret : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void describeNeverShowsTheValue_OV08()
    {
        const Secret s(QByteArrayLiteral("canary-7f3e-bearer"));
        QVERIFY(!s.describe().contains(QStringLiteral("canary")));
        QCOMPARE(s.describe(), QStringLiteral("<secret, 18 bytes>"));
        QCOMPARE(s.reveal(), QByteArray("canary-7f3e-bearer"));
    }
    void copiesAreIndependentAndComparable()
    {
        Secret a(QByteArrayLiteral("abc"));
        Secret b = a;
        QVERIFY(a.equals(b));
        Secret c(QByteArrayLiteral("abd"));
        QVERIFY(!a.equals(c));
        Secret moved = std::move(b);
        QVERIFY(moved.equals(a));
        QVERIFY(Secret().isEmpty());
    }
    void bytesAreKeptExactly_UC06()
    {
        // A trailing newline is part of the value: credentials are read byte for byte.
        const Secret s(QByteArrayLiteral("bearer\n"));
        QCOMPARE(s.size(), 7);
    }
};

QTEST_GUILESS_MAIN(TstSecret)
#include "tst_secret.moc"
