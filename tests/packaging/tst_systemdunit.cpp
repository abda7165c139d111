// packaging/coreflow.service states the unit contract (docs/operations.md "The systemd unit",
// docs/contract.md §19) and is hardened: `systemd-analyze verify` is clean and
// `systemd-analyze security --offline=yes` rates its exposure at most 2.0. Rules UC-01..UC-05,
// UC-11, UC-12, UC-15, UC-16 (UC-17 is replaced for this C++ build: MemoryDenyWriteExecute=yes).
#include "tests/support/skiporfail.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

class TstSystemdUnit : public QObject {
    Q_OBJECT

    static QString unitText()
    {
        QFile f(QStringLiteral(COREFLOW_UNIT_FILE));
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
    }
    // Every value of `key=` lines in the unit (comments ignored).
    static QStringList values(const QString &key)
    {
        QStringList out;
        for (const QString &line : unitText().split(QLatin1Char('\n')))
            if (line.startsWith(key + QLatin1Char('=')))
                out << line.mid(key.size() + 1);
        return out;
    }
    // The unit as installed by a test: its ExecStart points at an executable that exists here (verify
    // checks that it does); nothing else is changed.
    static QString installedCopy(QTemporaryDir &dir)
    {
        const QString exe = dir.filePath(QStringLiteral("coreflow"));
        QFile::copy(QStringLiteral("/bin/true"), exe);
        QString text = unitText();
        text.replace(QStringLiteral("\nExecStart=/opt/coreflow/coreflow"), QStringLiteral("\nExecStart=") + exe);
        const QString path = dir.filePath(QStringLiteral("coreflow.service"));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        f.write(text.toUtf8());
        return path;
    }
    static QString analyze() { return QStandardPaths::findExecutable(QStringLiteral("systemd-analyze")); }

private Q_SLOTS:
    void initTestCase() { QVERIFY2(!unitText().isEmpty(), COREFLOW_UNIT_FILE); }

    // The unit contract, point by point.
    void statesTheUnitContract_UC01_UC05_UC11_UC15()
    {
        QCOMPARE(values("Type"), QStringList{"exec"});                                   // UC-02
        const QStringList exec = values("ExecStart");                                    // UC-01 (+ §19.2's --operator-group)
        QCOMPARE(exec.size(), 1);
        QVERIFY2(QRegularExpression(QStringLiteral("^/opt/coreflow/coreflow( --operator-group [a-z-]+)?$")).match(exec.first()).hasMatch(),
                 qPrintable(exec.first()));
        QCOMPARE(values("LoadCredentialEncrypted"), QStringList{"SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"}); // UC-05
        for (const QString &env : values("Environment"))
            QVERIFY2(!env.contains(QLatin1String("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION")), qPrintable(env)); // never Environment=
        QCOMPARE(values("KillMode"), QStringList{"mixed"});                                // UC-11
        QCOMPARE(values("Restart"), QStringList{"always"});                                // UC-15
        QCOMPARE(values("LimitNOFILE").size(), 1);
        QVERIFY(values("LimitNOFILE").first().toInt() >= 65536);
        // The stop is bounded at 15000 ms by the relay (§19.3): systemd's bound stays above it (UC-12).
        QCOMPARE(values("TimeoutStopSec").size(), 1);
        QVERIFY(values("TimeoutStopSec").first().toInt() > 15);
        QCOMPARE(values("DynamicUser"), QStringList{"yes"});                               // UC-03
        QCOMPARE(values("CapabilityBoundingSet"), QStringList{""});
        for (const char *hardening : {"SystemCallFilter=@system-service", "MemoryDenyWriteExecute=yes", "UMask=0077",
                                      "ProtectProc=invisible", "ProcSubset=pid", "LimitCORE=0", "NoNewPrivileges=yes",
                                      "ProtectSystem=strict", "PrivateTmp=yes", "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX"})
            QVERIFY2(unitText().contains(QLatin1Char('\n') + QLatin1String(hardening) + QLatin1Char('\n')), hardening);
    }

    void verifyIsClean()
    {
        COREFLOW_SKIP_OR_FAIL(analyze().isEmpty() ? QStringLiteral("systemd-analyze is not installed") : QString());
        QTemporaryDir dir;
        const QString unit = installedCopy(dir);
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(analyze(), {QStringLiteral("verify"), unit});
        QVERIFY(p.waitForFinished(60000));
        const QByteArray out = p.readAll();
        QVERIFY2(p.exitCode() == 0 && out.trimmed().isEmpty(), out.constData());
    }

    void exposureAtMostTwo()
    {
        COREFLOW_SKIP_OR_FAIL(analyze().isEmpty() ? QStringLiteral("systemd-analyze is not installed") : QString());
        QTemporaryDir dir;
        const QString unit = installedCopy(dir);
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(analyze(), {QStringLiteral("security"), QStringLiteral("--offline=yes"), QStringLiteral("--no-pager"), unit});
        QVERIFY(p.waitForFinished(60000));
        const QString out = QString::fromUtf8(p.readAll());
        const auto match = QRegularExpression(QStringLiteral("Overall exposure level for \\S+: ([0-9]+\\.[0-9])")).match(out);
        QVERIFY2(match.hasMatch(), qPrintable(out));
        const double exposure = match.captured(1).toDouble();
        qInfo("systemd-analyze security exposure: %.1f", exposure);
        QVERIFY2(exposure <= 2.0, qPrintable(out));
    }
};

QTEST_GUILESS_MAIN(TstSystemdUnit)
#include "tst_systemdunit.moc"
