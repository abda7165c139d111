// console_metrics: `coreflow-console --metrics` against a REAL relay (tests/integration/relayfixture.h)
// that has carried nodes, held a DNS lease renewal run, lost Cloudly (an escrow offer, a reconnect) and
// got it back (a re-registration wave). The exposition is parsed by an independent parser, Debian's
// python3-prometheus-client (tests/console/parse_metrics.py), and every family docs/contract.md §18.3
// lists is checked against the relay's own statusSnapshot() and against what the test did.
// Rules: §18.3 (MX-01 families and values, MX-02 --output atomic, MX-03 a failed read writes up 0,
// MX-04 clock skew gauges, §9.6, D-87).
#include "console/metricsexposition.h"
#include "tests/console/consolefixtures.h"
#include "tests/integration/relayfixture.h"
#include "tests/peers/dnsleaserenewalrunbuilder.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

using namespace coreflow;
using coreflow::testing::RelayFixture;
using Builder = coreflow::peers::DnsLeaseRenewalRunBuilder;

namespace {

constexpr qint64 minute = 60000;
const char *const debianPython = "/usr/bin/python3";

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

Run runProcess(const QString &program, const QStringList &args, const QByteArray &input = {})
{
    QProcess proc;
    QSignalSpy finished(&proc, &QProcess::finished);
    proc.start(program, args);
    if (!input.isEmpty())
        proc.write(input);
    proc.closeWriteChannel();
    if (!finished.wait(20000))
        proc.kill();
    return {proc.exitStatus() == QProcess::NormalExit ? proc.exitCode() : -1, proc.readAllStandardOutput(),
            proc.readAllStandardError()};
}

// sample name + sorted labels -> value, from the independent parser; the family types beside.
struct Parsed {
    bool ok = false;
    QString error;
    QMap<QString, double> samples;
    QMap<QString, QString> types; // family -> type
    double value(const QString &name, const QString &labels = {}) const
    {
        return samples.value(labels.isEmpty() ? name : name + QLatin1Char('{') + labels + QLatin1Char('}'), -1e300);
    }
    bool has(const QString &key) const { return samples.contains(key); }
};

Parsed parse(const QByteArray &exposition)
{
    Parsed p;
    const Run r = runProcess(QString::fromLatin1(debianPython), {QStringLiteral(COREFLOW_PARSE_METRICS)}, exposition);
    if (r.exitCode != 0) {
        p.error = QString::fromUtf8(r.err);
        return p;
    }
    for (const QByteArray &line : r.out.split('\n')) {
        if (line.isEmpty())
            continue;
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        p.types.insert(o.value("family").toString(), o.value("type").toString());
        if (!o.contains("name"))
            continue; // a family record
        QStringList labels;
        const QJsonObject l = o.value("labels").toObject();
        for (auto it = l.constBegin(); it != l.constEnd(); ++it)
            labels << it.key() + QStringLiteral("=") + it.value().toString();
        labels.sort();
        const QString name = o.value("name").toString();
        p.samples.insert(labels.isEmpty() ? name : name + QLatin1Char('{') + labels.join(QLatin1Char(',')) + QLatin1Char('}'),
                         o.value("value").toDouble());
        p.types.insert(o.value("family").toString(), o.value("type").toString());
    }
    p.ok = true;
    return p;
}

} // namespace

class ConsoleMetricsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        if (!QFile::exists(QString::fromLatin1(debianPython))
            || runProcess(QString::fromLatin1(debianPython), {"-c", "import prometheus_client.parser"}).exitCode != 0)
            QFAIL("Debian's python3-prometheus-client is required (/usr/bin/python3 -c 'import prometheus_client')");
    }

    void familiesMatchTheRelaysState_MX01()
    {
        RelayFixture f;
        const peers::IssuedCertificate cert = f.ca.issueLocalhost();
        f.cloudly->setRelayCertificate(cert);
        RelayConfiguration config = f.configuration();
        config.statusSocketPath = f.dir.filePath(QStringLiteral("status.sock"));
        f.makeRelay(config);
        QVERIFY(f.startRelay());
        auto a = f.registeredNode(QStringLiteral("node-a"));
        auto b = f.registeredNode(QStringLiteral("node-b"));
        a->setPushHandler(QStringLiteral("applyRuntimeNetworkDnsLeaseRenewal"), [&f](const peers::PeerFrame &, const QJsonObject &request) {
            return Builder::acknowledge(request, f.clock.nowMs());
        });
        const auto binding = *a->session();
        const auto projection = Builder::projection("proj-1", 1);
        bool held = false;
        f.cloudly->push(QStringLiteral("holdRuntimeNetworkDnsLeaseRenewals"),
                        Builder::holdRequest(binding, projection, Builder::grid(binding, projection, f.clock.nowMs() - 12 * minute, 5)),
                        [&](const peers::PeerFrame &x) { held = !x.hasError(); });
        QTRY_VERIFY(held);
        // Cloudly goes away: the escrow offers node-a its current renewal (delivered); then it comes
        // back: one reconnect and a re-registration wave for the nodes registered under the old carrier.
        QVERIFY(f.takeCloudlySessionDown());
        QTRY_COMPARE(a->pushCount(QStringLiteral("applyRuntimeNetworkDnsLeaseRenewal")), 1);
        QTRY_COMPARE(f.relay->statusSnapshot().counters.escrowOffersByOutcome.value(QStringLiteral("delivered")), 1);
        QVERIFY(f.bringCloudlySessionBack());
        QTRY_COMPARE(f.relay->statusSnapshot().counters.reregistrationWaves, 1);

        const Run r = runProcess(QStringLiteral(COREFLOW_CONSOLE_BINARY), {"--metrics", "--socket", config.statusSocketPath});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.err, QByteArray());
        const status::RelayStatus s = f.relay->statusSnapshot(); // the clock has not moved since
        const Parsed p = parse(r.out);
        QVERIFY2(p.ok, qPrintable(p.error));

        // What the test did, written out.
        QCOMPARE(p.value("coreflow_relay_up"), 1.0);
        QCOMPARE(p.value("coreflow_relay_cloudly_reconnects_total"), 1.0);
        QCOMPARE(p.value("coreflow_relay_reregistration_waves_total"), 1.0);
        QCOMPARE(p.value("coreflow_relay_escrow_offers_total", "outcome=delivered"), 1.0);
        QCOMPARE(p.value("coreflow_relay_escrow_offers_total", "outcome=failed"), 0.0);
        QCOMPARE(p.value("coreflow_relay_escrow_runs_held"), 1.0);
        QCOMPARE(p.value("coreflow_relay_escrow_renewals_held"), 5.0);
        QVERIFY(p.value("coreflow_relay_status_clients_total") >= 1.0); // this console at least
        QCOMPARE(p.value("coreflow_relay_certificate_expiry_seconds"),
                 double((cert.cert.expiryDate().toMSecsSinceEpoch() - f.clock.nowMs()) / 1000));
        QCOMPARE(p.value("coreflow_relay_build_info", "build=" + s.build + ",contract_release=33.1.0"), 1.0);

        // The rest against the relay's own state.
        QCOMPARE(p.value("coreflow_relay_ready"), s.ready ? 1.0 : 0.0);
        QCOMPARE(p.value("coreflow_relay_parked"), 0.0);
        QCOMPARE(p.value("coreflow_relay_nodes_carried"), double(s.nodes.size()));
        qint64 inFlight = 0;
        for (const auto &n : s.nodes)
            inFlight += n.forwardsInFlight;
        QCOMPARE(p.value("coreflow_relay_requests_in_flight"), double(inFlight));
        QCOMPARE(p.value("coreflow_relay_forwards_total"), double(s.counters.forwards));
        QVERIFY(s.counters.forwards >= 2); // the two node registrations were forwarded
        QCOMPARE(p.value("coreflow_relay_pushes_total"), double(s.counters.pushes));
        QCOMPARE(p.value("coreflow_relay_registry_requests_total"), double(s.counters.registryRequests));
        QCOMPARE(p.value("coreflow_relay_registry_body_bytes_total"), double(s.counters.registryBodyBytes));
        QCOMPARE(p.value("coreflow_relay_status_clients_total"), double(s.counters.statusClients));
        QCOMPARE(p.value("coreflow_relay_start_time_seconds"), double(s.startedAtMs / 1000));
        for (auto it = s.counters.refusalsByName.constBegin(); it != s.counters.refusalsByName.constEnd(); ++it)
            QCOMPARE(p.value("coreflow_relay_refusals_total", "name=" + it.key()), double(it.value()));
        QVERIFY(s.ready);
        for (const char *hop : {"cloudly", "registration", "palletRuntime", "clusterIngress", "relay", "listener"})
            QCOMPARE(p.value("coreflow_relay_hop_ready", QStringLiteral("hop=") + hop), 1.0);

        // Counters are typed counter, the rest gauge (the parser strips _total from family names).
        for (const char *c : {"forwards", "pushes", "refusals", "cloudly_reconnects", "reregistration_waves", "escrow_offers",
                              "registry_requests", "registry_body_bytes", "status_clients"})
            QCOMPARE(p.types.value(QStringLiteral("coreflow_relay_") + c), QStringLiteral("counter"));
        for (const char *g : {"up", "ready", "parked", "hop_ready", "nodes_carried", "requests_in_flight", "escrow_runs_held",
                              "certificate_expiry_seconds"})
            QCOMPARE(p.types.value(QStringLiteral("coreflow_relay_") + g), QStringLiteral("gauge"));

        // Not ready: the Cloudly hop reads 0, the others 1.
        QVERIFY(f.takeCloudlySessionDown());
        const Parsed down = parse(runProcess(QStringLiteral(COREFLOW_CONSOLE_BINARY), {"--metrics", "--socket", config.statusSocketPath}).out);
        QVERIFY2(down.ok, qPrintable(down.error));
        QCOMPARE(down.value("coreflow_relay_ready"), 0.0);
        QCOMPARE(down.value("coreflow_relay_hop_ready", "hop=cloudly"), 0.0);
        QCOMPARE(down.value("coreflow_relay_hop_ready", "hop=listener"), 1.0);
        QCOMPARE(down.value("coreflow_relay_hop_ready", "hop=clusterIngress"), 1.0);
        QVERIFY(f.stopRelay());
    }

    // §9.6 / D-87: clock_skew_suspected is 0 until the escrow suspects skew; then 1, with
    // clock_skew_seconds{source} the size the relay's status holds.
    void clockSkewGauges_MX04_D87()
    {
        RelayFixture f;
        RelayConfiguration config = f.configuration();
        config.statusSocketPath = f.dir.filePath(QStringLiteral("status.sock"));
        f.makeRelay(config);
        QVERIFY(f.startRelay());
        auto a = f.registeredNode(QStringLiteral("node-a"));
        const QStringList args{"--metrics", "--socket", config.statusSocketPath};
        const Parsed before = parse(runProcess(QStringLiteral(COREFLOW_CONSOLE_BINARY), args).out);
        QVERIFY2(before.ok, qPrintable(before.error));
        QCOMPARE(before.value("coreflow_relay_clock_skew_suspected"), 0.0);
        QCOMPARE(before.types.value("coreflow_relay_clock_skew_suspected"), QStringLiteral("gauge"));
        QVERIFY(!before.has("coreflow_relay_clock_skew_seconds{source=run-signed-ahead}"));

        const auto binding = *a->session();
        const auto projection = Builder::projection("proj-1", 1);
        bool held = false;
        // Windows signed 90.5 s ahead of the relay's clock (more than the 30000 ms admission margin).
        f.cloudly->push(QStringLiteral("holdRuntimeNetworkDnsLeaseRenewals"),
                        Builder::holdRequest(binding, projection, Builder::grid(binding, projection, f.clock.nowMs() + 90500, 3)),
                        [&](const peers::PeerFrame &x) { held = !x.hasError(); });
        QTRY_VERIFY(held);
        QTRY_VERIFY(f.relay->statusSnapshot().clockSkew.suspected);
        const Parsed after = parse(runProcess(QStringLiteral(COREFLOW_CONSOLE_BINARY), args).out);
        QVERIFY2(after.ok, qPrintable(after.error));
        QCOMPARE(after.value("coreflow_relay_clock_skew_suspected"), 1.0);
        QCOMPARE(after.value("coreflow_relay_clock_skew_seconds", "source=run-signed-ahead"), 90.5);
        QCOMPARE(after.types.value("coreflow_relay_clock_skew_seconds"), QStringLiteral("gauge"));
        QVERIFY(f.stopRelay());
    }

    // §18.3 (D-96): the backup families, read by Prometheus' own parser from a status with a restore,
    // a closure received and two transfers ended (one stored, one stalled).
    void backupFamilies_D96()
    {
        const Parsed p = parse(console::MetricsExposition::render(consoletest::readyStatus()));
        QVERIFY2(p.ok, qPrintable(p.error));
        QCOMPARE(p.value("coreflow_relay_backup_operations_in_flight", "kind=backup"), 0.0);
        QCOMPARE(p.value("coreflow_relay_backup_operations_in_flight", "kind=restore"), 1.0);
        QCOMPARE(p.value("coreflow_relay_closure_transfers_in_flight", "direction=send"), 0.0);
        QCOMPARE(p.value("coreflow_relay_closure_transfers_in_flight", "direction=receive"), 1.0);
        QCOMPARE(p.value("coreflow_relay_closure_bytes_total", "direction=send"), 109051904.0);
        QCOMPARE(p.value("coreflow_relay_closure_bytes_total", "direction=receive"), 52428800.0);
        QCOMPARE(p.value("coreflow_relay_closure_transfers_total", "outcome=stored"), 1.0);
        QCOMPARE(p.value("coreflow_relay_closure_transfers_total", "outcome=closure-transfer-stalled"), 1.0);
        for (const char *g : {"backup_operations_in_flight", "closure_transfers_in_flight"})
            QCOMPARE(p.types.value(QStringLiteral("coreflow_relay_") + g), QStringLiteral("gauge"));
        for (const char *c : {"closure_bytes", "closure_transfers"})
            QCOMPARE(p.types.value(QStringLiteral("coreflow_relay_") + c), QStringLiteral("counter"));
    }

    // §18.3, issue 21: the VPN hub's families, read by Prometheus' own parser: hub-wide gauges, drops
    // by cause, and per member (labelled by nodeId and address) packets and bytes each way and drops by
    // cause. The hub's public key is not exported (nor any other key: there is none in the status).
    void vpnFamilies_VH03()
    {
        status::RelayStatus s = consoletest::readyStatus();
        status::VpnMemberStatus a;
        a.nodeId = QStringLiteral("node-a");
        a.address = QStringLiteral("100.96.0.2");
        a.connected = true;
        a.packetsIn = 11;
        a.bytesIn = 11000;
        a.packetsOut = 7;
        a.bytesOut = 7700;
        a.drops.insert(QStringLiteral("spoofed-source"), 2);
        a.drops.insert(QStringLiteral("queue-full"), 5);
        status::VpnMemberStatus b;
        b.nodeId = QStringLiteral("node-b");
        b.address = QStringLiteral("100.96.0.3");
        b.packetsOut = 9;
        b.bytesOut = 9900;
        s.vpn.members = {a, b};
        s.vpn.memberCount = 2;
        s.vpn.membersConnected = 1;
        s.vpn.drops.insert(QStringLiteral("no-session"), 3);
        const QByteArray text = console::MetricsExposition::render(s);
        const Parsed p = parse(text);
        QVERIFY2(p.ok, qPrintable(p.error));
        QCOMPARE(p.value("coreflow_relay_vpn_hub_bound"), 1.0);
        QCOMPARE(p.value("coreflow_relay_vpn_members_admitted"), 2.0);
        QCOMPARE(p.value("coreflow_relay_vpn_members_connected"), 1.0);
        QCOMPARE(p.value("coreflow_relay_vpn_network_revision"), 5.0);
        QCOMPARE(p.value("coreflow_relay_vpn_drops_total", "cause=ungranted-pair"), 4.0);
        QCOMPARE(p.value("coreflow_relay_vpn_drops_total", "cause=no-session"), 3.0);
        const QString la = QStringLiteral("address=100.96.0.2,"), ma = QStringLiteral(",member=node-a");
        const QString lb = QStringLiteral("address=100.96.0.3,"), mb = QStringLiteral(",member=node-b");
        QCOMPARE(p.value("coreflow_relay_vpn_member_connected", "address=100.96.0.2,member=node-a"), 1.0);
        QCOMPARE(p.value("coreflow_relay_vpn_member_connected", "address=100.96.0.3,member=node-b"), 0.0);
        QCOMPARE(p.value("coreflow_relay_vpn_member_packets_total", la + "direction=in" + ma), 11.0);
        QCOMPARE(p.value("coreflow_relay_vpn_member_packets_total", la + "direction=out" + ma), 7.0);
        QCOMPARE(p.value("coreflow_relay_vpn_member_bytes_total", la + "direction=in" + ma), 11000.0);
        QCOMPARE(p.value("coreflow_relay_vpn_member_bytes_total", la + "direction=out" + ma), 7700.0);
        QCOMPARE(p.value("coreflow_relay_vpn_member_packets_total", lb + "direction=in" + mb), 0.0);
        QCOMPARE(p.value("coreflow_relay_vpn_member_packets_total", lb + "direction=out" + mb), 9.0);
        QCOMPARE(p.value("coreflow_relay_vpn_member_bytes_total", lb + "direction=out" + mb), 9900.0);
        QCOMPARE(p.value("coreflow_relay_vpn_member_drops_total", la + "cause=spoofed-source" + ma), 2.0);
        QCOMPARE(p.value("coreflow_relay_vpn_member_drops_total", la + "cause=queue-full" + ma), 5.0);
        QVERIFY(!p.has("coreflow_relay_vpn_member_drops_total{" + lb + "cause=queue-full" + mb + "}"));
        for (const char *g : {"vpn_hub_bound", "vpn_members_admitted", "vpn_members_connected", "vpn_network_revision", "vpn_member_connected"})
            QCOMPARE(p.types.value(QStringLiteral("coreflow_relay_") + g), QStringLiteral("gauge"));
        for (const char *c : {"vpn_drops", "vpn_member_packets", "vpn_member_bytes", "vpn_member_drops"})
            QCOMPARE(p.types.value(QStringLiteral("coreflow_relay_") + c), QStringLiteral("counter"));
        QVERIFY(!text.contains(s.vpn.publicKey.toLatin1()));

        // No network held, no hub bound: bound 0, no revision sample, no member series.
        status::RelayStatus idle = consoletest::readyStatus();
        idle.vpn = status::VpnHubStatus{};
        const Parsed q = parse(console::MetricsExposition::render(idle));
        QVERIFY2(q.ok, qPrintable(q.error));
        QCOMPARE(q.value("coreflow_relay_vpn_hub_bound"), 0.0);
        QCOMPARE(q.value("coreflow_relay_vpn_members_admitted"), 0.0);
        QVERIFY(!q.has("coreflow_relay_vpn_network_revision"));
        for (auto it = q.samples.constBegin(); it != q.samples.constEnd(); ++it)
            QVERIFY2(!it.key().startsWith(QStringLiteral("coreflow_relay_vpn_member_")), qPrintable(it.key()));
    }

    // Issue 14 defect 9 (review): `--metrics` writes to the operator's terminal by default, so a string
    // the relay sent must not carry a control character (ESC, CR, BEL, DEL, C1) or a format character
    // (bidi override) into it, as §18 asks of the other terminal modes. Label values are escaped for
    // Prometheus only (backslash, quote, newline): ESC and CR went through as sent.
    void serverStringsLoseTheirControlCharacters()
    {
        status::RelayStatus s = consoletest::readyStatus();
        const QString hostile = QStringLiteral("b\x1b]0;owned\x07\rcoreflow_relay_ready 1\u202Ex\x7f\u009b2J");
        s.build = hostile;
        s.contractRelease = hostile;
        s.counters.refusalsByName.insert(hostile, 1);
        const QString out = QString::fromUtf8(console::MetricsExposition::render(s));
        for (const QChar ch : out) {
            if (ch == QLatin1Char('\n'))
                continue;
            QVERIFY2(ch.category() != QChar::Other_Control && ch.category() != QChar::Other_Format,
                     qPrintable(QStringLiteral("U+%1 printed").arg(ch.unicode(), 4, 16, QLatin1Char('0'))));
        }
    }

    void outputIsWrittenAtomically_MX02_MX03()
    {
        RelayFixture f;
        RelayConfiguration config = f.configuration();
        config.statusSocketPath = f.dir.filePath(QStringLiteral("status.sock"));
        f.makeRelay(config);
        QVERIFY(f.startRelay());
        QDir out(f.dir.filePath(QStringLiteral("textfile")));
        QVERIFY(out.mkpath(QStringLiteral(".")));
        const QString file = out.filePath(QStringLiteral("coreflow.prom"));
        QFile stale(file);
        QVERIFY(stale.open(QIODevice::WriteOnly));
        stale.write("coreflow_relay_up 1\ncoreflow_relay_forwards_total 123456\n");
        stale.close();

        Run r = runProcess(QStringLiteral(COREFLOW_CONSOLE_BINARY), {"--metrics", "--output", file, "--socket", config.statusSocketPath});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.isEmpty());
        QFile written(file);
        QVERIFY(written.open(QIODevice::ReadOnly));
        const Parsed p = parse(written.readAll());
        QVERIFY2(p.ok, qPrintable(p.error));
        QCOMPARE(p.value("coreflow_relay_up"), 1.0);
        QCOMPARE(p.value("coreflow_relay_forwards_total"), double(f.relay->statusSnapshot().counters.forwards));
        QCOMPARE(out.entryList(QDir::Files | QDir::Hidden), QStringList{QStringLiteral("coreflow.prom")}); // no temp file left

        // No relay: the file says up 0 (no stale values) and the exit code is cannot-connect.
        QVERIFY(f.stopRelay());
        r = runProcess(QStringLiteral(COREFLOW_CONSOLE_BINARY), {"--metrics", "--output", file, "--socket", config.statusSocketPath});
        QCOMPARE(r.exitCode, 3);
        QFile after(file);
        QVERIFY(after.open(QIODevice::ReadOnly));
        const Parsed gone = parse(after.readAll());
        QVERIFY2(gone.ok, qPrintable(gone.error));
        QCOMPARE(gone.value("coreflow_relay_up"), 0.0);
        QVERIFY(!gone.has("coreflow_relay_forwards_total"));

        // A directory that cannot be written: exit 6, one line naming the file.
        r = runProcess(QStringLiteral(COREFLOW_CONSOLE_BINARY),
                       {"--metrics", "--output", f.dir.filePath(QStringLiteral("no-such-dir/x.prom")), "--socket", config.statusSocketPath});
        QCOMPARE(r.exitCode, 3); // the read fails first (no relay); the up-0 write fails too and says so
        QVERIFY2(r.err.contains("cannot write"), r.err.constData());
    }
};

// Stays on Qt's default event dispatcher although a relay runs in-process: QTEST_MAIN builds a
// QApplication here (the console library links Qt Widgets), whose platform plugin needs its own
// dispatcher (QUnixEventDispatcherQPA flushes the window-system events; the relay's epoll dispatcher,
// a daemon's, does not). The relay on its production dispatcher is tested in tests/integration/ and
// tests/registry/ (tests/PROOFS.md "Dispatcher").
QTEST_MAIN(ConsoleMetricsTest)
#include "console_metrics.moc"
