// Secrets in memory (docs/contract.md §19.4; issue 14 "Secrets in memory"; OV-08, OV-10, UC-16): the
// built `coreflow` runs against the loopback Cloudly with a canary bearer, and its memory is read the
// way a core dump or a swap image would see it: every writable mapping in /proc/<pid>/maps, through
// /proc/<pid>/mem (the tests run as root, which PR_SET_DUMPABLE 0 does not lock out). A canary may only
// lie in a mapping the kernel marks "dd" (MADV_DONTDUMP, VmFlags in /proc/<pid>/smaps): the guarded
// pages a Secret lives in. The bearer is searched as UTF-8 and as UTF-16 (a QString copy).
// After an identity renewal the old token is nowhere, and after a park the bearer is nowhere.
// A freed heap block is searched too, and is found only while nothing reused it: ASan's quarantine
// keeps freed blocks unused in the sanitizer build; in the plain build the relay runs with
// tests/support/freedheapquarantine.cpp preloaded, which does the same (D-134), and a scan of a relay
// that does not have it mapped reads nothing (so fails).
// The Corestore control token (§12.1) is used for a few inventory calls and then lies only in guarded
// pages too: not in the parsed material, not in the Authorization header the HTTP client wrote.
// A route table's key stays in guarded pages after Cloudly pushed it and after the bound cluster
// ingress pulled it (the one node-facing answer that carries keys; its frame and queue are wiped).
// Rules: OV-05 (the bearer only in memory), OC-11 (markers absent from a memory dump), RR-29 (park),
// CS-09 (the control token is never exposed).
#include "tests/support/epolltestmain.h"
#include "tests/peers/peerenvelope.h"
#include "tests/peers/peerframe.h"
#include "tests/integration/relayfixture.h"
#include "tests/support/processwait.h"
#include "tests/support/sanitizerruntime.h"
#include "tests/peers/loopbackingress.h"
#ifdef COREFLOW_CORESTORE_PEER
#include "tests/peers/loopbackcorestore.h"
#endif

#include "shared/contract/envelope.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <unistd.h>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::Answer;

namespace {

struct Mapping {
    quint64 start = 0;
    quint64 end = 0;
    QByteArray perms;
    QByteArray name;
    bool dontDump = false;
};

struct Hit {
    quint64 address = 0;
    Mapping mapping;
    QByteArray encoding;
};

QList<Mapping> mappingsOf(qint64 pid)
{
    QFile smaps(QStringLiteral("/proc/%1/smaps").arg(pid));
    QList<Mapping> out;
    if (!smaps.open(QIODevice::ReadOnly))
        return out;
    for (const QByteArray &line : smaps.readAll().split('\n')) {
        if (line.startsWith("VmFlags:")) {
            if (!out.isEmpty())
                out.last().dontDump = line.mid(8).split(' ').contains("dd");
            continue;
        }
        const QList<QByteArray> fields = line.simplified().split(' ');
        const qsizetype dash = fields.value(0).indexOf('-');
        if (fields.size() < 5 || dash <= 0 || fields.value(0).endsWith(':'))
            continue;
        bool okStart = false, okEnd = false;
        Mapping m;
        m.start = fields[0].left(dash).toULongLong(&okStart, 16);
        m.end = fields[0].mid(dash + 1).toULongLong(&okEnd, 16);
        if (!okStart || !okEnd)
            continue;
        m.perms = fields[1];
        m.name = fields.size() > 5 ? fields[5] : QByteArray("[anon]");
        out.append(m);
    }
    return out;
}

QByteArray utf16Of(const QByteArray &latin1)
{
    QByteArray out;
    for (char c : latin1) {
        out += c;
        out += '\0';
    }
    return out;
}

// A mapping the kernel leaves out of a core dump (dd) and larger than this is no Secret's guarded pages
// but a sanitizer's shadow memory (ASan and TSan reserve terabytes of address space for it with
// MADV_DONTDUMP): reading it through /proc/<pid>/mem would fault in every page of it. Guarded pages
// are a few pages per Secret.
constexpr quint64 kLargestGuardedMapping = quint64(1) << 30;
// The scan reads a mapping in windows of this size, each overlapping the previous one by the needle's
// length, so neither side holds a copy of a whole large mapping.
constexpr qsizetype kScanWindow = qsizetype(16) << 20;

// Every place a needle lies in the process' readable, writable mappings.
QList<Hit> find(qint64 pid, const QByteArray &needle, int *mappingsRead)
{
    QList<Hit> hits;
    const int mem = ::open(QStringLiteral("/proc/%1/mem").arg(pid).toLocal8Bit().constData(), O_RDONLY);
    if (mem < 0)
        return hits;
    const QList<QByteArray> needles{needle, utf16Of(needle)};
    const qsizetype overlap = utf16Of(needle).size() - 1;
    *mappingsRead = 0;
    QByteArray window;
    const QList<Mapping> mappings = mappingsOf(pid);
#ifdef COREFLOW_FREED_HEAP_QUARANTINE
    // Without the quarantine module in the relay the scan would depend on glibc's reuse: read nothing.
    if (std::none_of(mappings.cbegin(), mappings.cend(),
                     [](const Mapping &m) { return m.name.endsWith(QFileInfo(QStringLiteral(COREFLOW_FREED_HEAP_QUARANTINE)).fileName().toUtf8()); })) {
        ::close(mem);
        return hits;
    }
#endif
    for (const Mapping &m : mappings) {
        if (!m.perms.startsWith("rw") || m.name == "[vvar]" || m.name == "[vsyscall]")
            continue;
        if (m.dontDump && m.end - m.start > kLargestGuardedMapping)
            continue;
        bool readSome = false;
        for (quint64 from = m.start; from < m.end;) {
            const qsizetype want = qsizetype(qMin<quint64>(quint64(kScanWindow + overlap), m.end - from));
            window.resize(want);
            qsizetype got = 0;
            while (got < want) {
                const ssize_t n = ::pread(mem, window.data() + got, size_t(want - got), off_t(from + quint64(got)));
                if (n <= 0)
                    break;
                got += n;
            }
            if (got == 0)
                break;
            readSome = true;
            window.truncate(got);
            const bool more = got == want && from + quint64(got) < m.end;
            for (const QByteArray &n : needles) {
                for (qsizetype at = window.indexOf(n); at >= 0; at = window.indexOf(n, at + 1)) {
                    // A hit starting in the overlap is found again by the next window.
                    if (more && at + overlap >= got)
                        break;
                    hits.append(Hit{from + quint64(at), m, n.size() == needle.size() ? "utf-8" : "utf-16"});
                }
            }
            if (!more)
                break;
            from += quint64(got - overlap);
        }
        if (readSome)
            ++*mappingsRead;
    }
    ::close(mem);
    return hits;
}

QString describe(const QList<Hit> &hits)
{
    QStringList out;
    for (const Hit &h : hits)
        out << QStringLiteral("%1 at 0x%2 in %3 %4%5 (0x%6-0x%7)")
                   .arg(QString::fromLatin1(h.encoding))
                   .arg(h.address, 0, 16)
                   .arg(QString::fromLatin1(h.mapping.name), QString::fromLatin1(h.mapping.perms),
                        h.mapping.dontDump ? QStringLiteral(" dd") : QString())
                   .arg(h.mapping.start, 0, 16)
                   .arg(h.mapping.end, 0, 16);
    return out.join(QStringLiteral("; "));
}

// Under ASan or TSan the runtime reads /proc/self/environ into a buffer of its own before main() and
// keeps it (sanitizer_common's GetEnv on Linux): a copy of the launch environment the relay never
// sees, so it cannot wipe it (D-123). A hit is that copy when it is the value of the bearer's variable
// in a small anonymous mapping that also holds other entries of the environment the test launched the
// relay with. In the plain build no hit is excused.
QList<Hit> withoutSanitizerEnvironmentCopy(qint64 pid, const QList<Hit> &hits)
{
#ifdef COREFLOW_SANITIZER_RUNTIME
    QList<Hit> out;
    const int mem = ::open(QStringLiteral("/proc/%1/mem").arg(pid).toLocal8Bit().constData(), O_RDONLY);
    for (const Hit &h : hits) {
        bool copy = false;
        const quint64 size = h.mapping.end - h.mapping.start;
        if (mem >= 0 && h.mapping.name == "[anon]" && h.encoding == "utf-8" && size <= (quint64(1) << 20)) {
            QByteArray bytes(qsizetype(size), '\0');
            const ssize_t got = ::pread(mem, bytes.data(), size_t(size), off_t(h.mapping.start));
            const qsizetype at = qsizetype(h.address - h.mapping.start);
            copy = got == ssize_t(size) && bytes.left(at).endsWith(QByteArrayLiteral("\0SERVEZONE_CLUSTER_RELAY_AUTHORIZATION="))
                && bytes.contains(QByteArrayLiteral("\0COREFLOW_NODE_ID=node-relay\0"))
                && bytes.contains(QByteArrayLiteral("\0COREFLOW_RELAY_BIND_HOSTNAME=127.0.0.1\0"));
        }
        if (!copy)
            out.append(h);
    }
    if (mem >= 0)
        ::close(mem);
    return out;
#else
    Q_UNUSED(pid);
    return hits;
#endif
}

QList<Hit> outsideGuardedPages(const QList<Hit> &hits)
{
    QList<Hit> out;
    for (const Hit &h : hits)
        if (!h.mapping.dontDump)
            out.append(h);
    return out;
}

} // namespace

class TstMemoryCanary : public QObject {
    Q_OBJECT

    QString binary() const { return qEnvironmentVariable("COREFLOW_BINARY"); }

    enum class BearerSource { Environment, CredentialsFile };

    std::unique_ptr<QProcess> launch(RelayFixture &f, QTemporaryDir &dir, BearerSource source)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION");
        if (source == BearerSource::Environment) {
            env.insert("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", QString::fromLatin1(f.bearer));
        } else {
            QDir().mkpath(dir.filePath("creds"));
            QFile cred(dir.filePath("creds/SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
            if (!cred.open(QIODevice::WriteOnly))
                return nullptr;
            cred.write(f.bearer);
            cred.close();
            env.insert("CREDENTIALS_DIRECTORY", dir.filePath("creds"));
        }
        f.ca.writeCaPem(dir.filePath("ca.pem"));
        env.insert("CLOUDLY_URL", f.cloudly->url().toString());
        env.insert("COREFLOW_NODE_ID", "node-relay");
        env.insert("COREFLOW_RELAY_BIND_HOSTNAME", "127.0.0.1");
        env.insert("COREFLOW_RELAY_BIND_PORT", QString::number(f.relayPort));
#ifdef COREFLOW_FREED_HEAP_QUARANTINE
        // The plain build keeps the relay's freed heap blocks out of reuse, as ASan's quarantine does in
        // the sanitizer build: a copy the relay freed unwiped is then found, not overwritten by luck.
        env.insert("LD_PRELOAD", QStringLiteral(COREFLOW_FREED_HEAP_QUARANTINE));
#endif
        auto p = std::make_unique<QProcess>();
        p->setProcessEnvironment(env);
        p->setProcessChannelMode(QProcess::SeparateChannels);
        p->start(binary(), {"--ca-file", dir.filePath("ca.pem"), "--status-socket", dir.filePath("status.sock")});
        return p;
    }

    // Cloudly pushes a route table whose one certificate's private key PEM carries `canary`.
    static bool pushTableWithKey(RelayFixture &f, const QByteArray &canary)
    {
        const QJsonObject target{{"nodeId", "node-a"}, {"address", "10.0.0.5"}, {"port", 30080}};
        const QJsonObject table{
            {"clusterId", f.cloudly->issuedIdentities().value(0).value("clusterId")},
            {"revision", 3},
            {"computedAt", 1700000000003LL},
            {"routes", QJsonArray{QJsonObject{{"hostname", "a.example.com"}, {"certificateId", "cert-a"}, {"targets", QJsonArray{target}}}}},
            {"certificates", QJsonArray{QJsonObject{{"id", "cert-a"},
                                                    {"hostnames", QJsonArray{"a.example.com"}},
                                                    {"certificatePem", "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n"},
                                                    {"privateKeyPem", QStringLiteral("-----BEGIN PRIVATE KEY-----\n%1\n-----END PRIVATE KEY-----\n")
                                                                          .arg(QString::fromLatin1(canary))}}}}};
        bool accepted = false;
        f.cloudly->push("pushClusterRouteTable", peers::PeerEnvelope::compact({{"routeTable", table}}),
                        [&](const peers::PeerFrame &answer) { accepted = !answer.hasError(); });
        return QTest::qWaitFor([&] { return accepted; }, 10000);
    }

    static void stop(QProcess &p)
    {
        ::kill(pid_t(p.processId()), SIGTERM);
        if (!p.waitForFinished(15000))
            p.kill();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFile::exists(binary()), "COREFLOW_BINARY is not set to the built coreflow");
        QVERIFY2(::geteuid() == 0, "reading another process' memory needs root (the suite runs as root)");
    }

    // The bearer (from the environment) and the identity token are held only in guarded pages; the
    // environment block no longer carries the bearer.
    void secretsLieOnlyInGuardedPages_OV05_OC11()
    {
        RelayFixture f;
        QTemporaryDir dir;
        auto p = launch(f, dir, BearerSource::Environment);
        QVERIFY(p);
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "the relay is open for Cloudly dispatch", err), err.constData());
        QTRY_VERIFY(f.cloudly->callCount("registerClusterRelay") >= 1);
        QVERIFY(f.settleCloudlyHop()); // the relay processed every frame Cloudly sent before this one
        QVERIFY(!f.cloudly->issuedIdentities().isEmpty());
        const QByteArray token = f.cloudly->issuedIdentities().last().value("token").toString().toLatin1();
        const qint64 pid = p->processId();

        int mappingsRead = 0;
        const QList<Hit> bearerHits = withoutSanitizerEnvironmentCopy(pid, find(pid, f.bearer, &mappingsRead));
        QVERIFY2(mappingsRead > 5, "the relay's memory could not be read");
        const QList<Hit> tokenHits = find(pid, token, &mappingsRead);
        QFile environ(QStringLiteral("/proc/%1/environ").arg(pid));
        QVERIFY(environ.open(QIODevice::ReadOnly));
        const QByteArray environment = environ.readAll();
        stop(*p);

        // The scan sees the one copy the relay must hold (else it proves nothing).
        QVERIFY2(!bearerHits.isEmpty(), "the held bearer was not found: the scan is blind");
        QVERIFY2(outsideGuardedPages(bearerHits).isEmpty(), qPrintable(describe(outsideGuardedPages(bearerHits))));
        QVERIFY2(!tokenHits.isEmpty(), "the held identity token was not found: the scan is blind");
        QVERIFY2(outsideGuardedPages(tokenHits).isEmpty(), qPrintable(describe(outsideGuardedPages(tokenHits))));
        QVERIFY(!environment.contains(f.bearer));
        QVERIFY(!environment.contains("SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"));
    }

    // The listener's private key (LO-07): no copy of its DER bytes outside guarded pages.
    void listenerKeyLiesOnlyInGuardedPages_LO07()
    {
        RelayFixture f;
        const peers::IssuedCertificate material = f.ca.issueForHost(QStringLiteral("localhost"));
        f.cloudly->setRelayCertificate(material, QStringLiteral("localhost"));
        QList<QByteArray> pemLines;
        for (const QByteArray &line : material.keyPem.split('\n'))
            if (line.size() == 64)
                pemLines << line;
        QVERIFY(pemLines.size() >= 2);
        QByteArray der = QByteArray::fromBase64(pemLines.join());
        QTemporaryDir dir;
        auto p = launch(f, dir, BearerSource::CredentialsFile);
        QVERIFY(p);
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "the relay is open for Cloudly dispatch", err), err.constData());
        QVERIFY(f.settleCloudlyHop()); // the relay processed every frame Cloudly sent before this one
        int mappingsRead = 0;
        const QList<Hit> pemHits = find(p->processId(), pemLines.at(pemLines.size() / 2), &mappingsRead);
        const QList<Hit> derHits = find(p->processId(), der.mid(der.size() / 2, 24), &mappingsRead);
        stop(*p);
        QVERIFY(mappingsRead > 5);
        QVERIFY2(outsideGuardedPages(derHits).isEmpty(), qPrintable(describe(outsideGuardedPages(derHits))));
        // The PEM too (issue 14 review gap 5): the certificate answer's key goes from its bytes into
        // the Secret without a QJsonDocument/QString copy (contract §19.4).
        // (The PEM itself is not held once the key is loaded, so no copy at all is expected; before
        // this change a UTF-16 copy of its lines lay in freed heap.)
        QVERIFY2(outsideGuardedPages(pemHits).isEmpty(), qPrintable(describe(outsideGuardedPages(pemHits))));
    }

    // A pushed route table's keys (CI-01): the held table is in guarded pages (it is one Secret).
    void routeTableKeysLieInGuardedPages_CI01()
    {
        RelayFixture f;
        QTemporaryDir dir;
        auto p = launch(f, dir, BearerSource::CredentialsFile);
        QVERIFY(p);
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "the relay is open for Cloudly dispatch", err), err.constData());
        const QByteArray canary = "routeTableKeyCanary" + f.bearer.right(12);
        QVERIFY(pushTableWithKey(f, canary));
        QVERIFY(f.settleCloudlyHop()); // the relay processed every frame Cloudly sent before this one
        int mappingsRead = 0;
        const QList<Hit> hits = find(p->processId(), canary, &mappingsRead);
        stop(*p);
        QVERIFY(mappingsRead > 5);
        QVERIFY2(!hits.isEmpty(), "the held table was not found: the scan is blind");
        QVERIFY2(outsideGuardedPages(hits).size() < hits.size(), "no copy in guarded pages");
        // And nowhere else (issue 14 review gap 5): the keys go from the frame's bytes into Secrets,
        // QJsonDocument reads only a wiped copy with them blanked (contract §19.4).
        QVERIFY2(outsideGuardedPages(hits).isEmpty(), qPrintable(describe(outsideGuardedPages(hits))));
    }

    // The one node-facing answer that carries keys (§19.4, CI-01): the bound cluster ingress pulls the
    // table. The relay composes the answer in guarded memory, frames it and writes it to TLS; neither the
    // frame nor a write queue may leave a key copy behind. (Before the frame was wiped, its freed heap
    // block kept the key.)
    void ingressPullLeavesNoKeyOutsideGuardedPages_CI01()
    {
        RelayFixture f;
        QTemporaryDir dir;
        auto p = launch(f, dir, BearerSource::CredentialsFile);
        QVERIFY(p);
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "the relay is open for Cloudly dispatch", err), err.constData());
        const QByteArray canary = "ingressPullKeyCanary" + f.bearer.right(12);
        QVERIFY(pushTableWithKey(f, canary));
        peers::LoopbackIngress::Options options;
        options.url = QUrl(QStringLiteral("wss://localhost:%1/").arg(f.relayPort));
        options.caCertificates = {f.ca.caCertificate()};
        options.pullOnHint = false;
        peers::LoopbackIngress ingress(options);
        ingress.open();
        QVERIFY2(QTest::qWaitFor([&] { return ingress.isConnected(); }, 10000), qPrintable(ingress.lastError()));
        bool registered = false;
        ingress.registerIngress([&](const peers::PeerFrame &answer) { registered = !answer.hasError(); });
        QVERIFY(QTest::qWaitFor([&] { return registered; }, 10000));
        for (int i = 0; i < 3; ++i) {
            bool pulled = false;
            ingress.pullRouteTable([&](const peers::PeerFrame &answer) { pulled = !answer.hasError(); });
            QVERIFY(QTest::qWaitFor([&] { return pulled; }, 10000));
            QVERIFY2(ingress.routeTableRaw().contains(canary), "the pulled table does not carry the key");
        }
        QVERIFY(f.settleCloudlyHop());
        int mappingsRead = 0;
        const QList<Hit> hits = find(p->processId(), canary, &mappingsRead);
        stop(*p);
        QVERIFY(mappingsRead > 5);
        QVERIFY2(!hits.isEmpty(), "the held table was not found: the scan is blind");
        QVERIFY2(outsideGuardedPages(hits).isEmpty(), qPrintable(describe(outsideGuardedPages(hits))));
    }

#ifdef COREFLOW_CORESTORE_PEER
    // The Corestore control token (CS-09, §12.1, §19.4): after it was opened and sent with a few
    // inventory calls through the relay, it lies only in guarded pages (the held Secret).
    void corestoreTokenLiesOnlyInGuardedPages_CS09_OC11()
    {
        RelayFixture f;
        const QByteArray token = "corestoreTokenCanary-" + f.bearer.right(12);
        peers::LoopbackCorestore corestore(f.ca);
        QVERIFY(corestore.listen());
        corestore.setAcceptedToken(token);
        f.cloudly->corestoreRecipients().setToken(token);
        f.cloudly->options().clusterNodes = QJsonArray{QJsonObject{{"id", "node-a"},
                                                                   {"corestore", QJsonObject{{"endpoint", corestore.endpoint().toString()}}},
                                                                   {"corestoreDatabase", QJsonValue::Null}}};
        QTemporaryDir dir;
        auto p = launch(f, dir, BearerSource::CredentialsFile);
        QVERIFY(p);
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "the relay is open for Cloudly dispatch", err), err.constData());
        for (int i = 0; i < 3; ++i) {
            bool inventoried = false;
            f.cloudly->push(QStringLiteral("getClusterCorestoreInventory"), QByteArray(R"({"nodeId":"node-a"})"),
                            [&](const peers::PeerFrame &x) {
                                inventoried = !x.hasError() && x.response.toByteArray().contains("\"reachable\":true");
                            });
            QTRY_VERIFY_WITH_TIMEOUT(inventoried, 10000);
        }
        QCOMPARE(corestore.requestCount(peers::LoopbackCorestore::inventoryRoute), 3);
        QCOMPARE(corestore.lastRequest(peers::LoopbackCorestore::inventoryRoute)->header("authorization"),
                 QByteArrayLiteral("Bearer ") + token);
        QVERIFY(f.settleCloudlyHop()); // the relay processed every frame Cloudly sent before this one
        int mappingsRead = 0;
        const QList<Hit> hits = find(p->processId(), token, &mappingsRead);
        stop(*p);
        QVERIFY(mappingsRead > 5);
        QVERIFY2(!hits.isEmpty(), "the held control token was not found: the scan is blind");
        QVERIFY2(outsideGuardedPages(hits).isEmpty(), qPrintable(describe(outsideGuardedPages(hits))));
    }
#endif

    // A renewed identity leaves no trace of the old token anywhere.
    void renewedTokenIsGone_OC11()
    {
        RelayFixture f(true, [](peers::LoopbackCloudly::Options &o) { o.identityLifetimeMs = 4000; });
        QTemporaryDir dir;
        auto p = launch(f, dir, BearerSource::CredentialsFile);
        QVERIFY(p);
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "the relay is open for Cloudly dispatch", err), err.constData());
        QTRY_VERIFY_WITH_TIMEOUT(f.cloudly->callCount("refreshClusterIdentity") >= 1, 15000);
        QTRY_VERIFY(f.cloudly->callCount("registerCloudlyClientSession") >= 2);
        QVERIFY(f.settleCloudlyHop()); // the relay processed every frame Cloudly sent before this one
        const QByteArray oldToken = f.cloudly->issuedIdentities().first().value("token").toString().toLatin1();
        int mappingsRead = 0;
        const QList<Hit> hits = find(p->processId(), oldToken, &mappingsRead);
        const QList<Hit> bearerHits = find(p->processId(), f.bearer, &mappingsRead);
        stop(*p);
        QVERIFY(mappingsRead > 5);
        QVERIFY2(hits.isEmpty(), qPrintable(describe(hits)));
        QVERIFY2(outsideGuardedPages(bearerHits).isEmpty(), qPrintable(describe(outsideGuardedPages(bearerHits))));
    }

    // A parked relay never authenticates again: its bearer is gone from memory (§6.6.1, §19.4).
    void parkedRelayHoldsNoBearer_RR29_OC11()
    {
        RelayFixture f;
        f.cloudly->setAnswer("registerClusterRelay", Answer::refuse(QLatin1StringView("relay-credential-generation-stale"), "rotated"));
        QTemporaryDir dir;
        auto p = launch(f, dir, BearerSource::CredentialsFile);
        QVERIFY(p);
        QByteArray err;
        QVERIFY2(waitForStderr(*p, "relay parked", err), err.constData());
        QVERIFY(f.settleCloudlyHop()); // the relay processed every frame Cloudly sent before this one
        int mappingsRead = 0;
        const QList<Hit> hits = find(p->processId(), f.bearer, &mappingsRead);
        stop(*p);
        QVERIFY(mappingsRead > 5);
        QVERIFY2(hits.isEmpty(), qPrintable(describe(hits)));
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstMemoryCanary)
#include "tst_memorycanary.moc"
