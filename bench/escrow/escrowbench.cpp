// coreflow-escrow-bench: what custody of 10000 nodes' full 32-renewal runs costs the relay, measured
// in-process (no sockets): resident memory (VmRSS), the time to compute and compose the releases at a
// window start, and the re-registration wave's schedule for 10000 nodes. The node lane is a fake
// EscrowCourier that acknowledges synchronously, so the numbers are the escrow's own work.
//
// Usage: coreflow-escrow-bench [--nodes N] [--renewals R] [--json PATH]
#include "shared/contract/envelope.h"
#include "shared/contract/methods.h"
#include "service/escrow/leaseescrow.h"
#include "service/forwarding/reregistrationwave.h"
#include "shared/util/manualclock.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSysInfo>
#include <QTextStream>
#include <malloc.h>

using namespace coreflow;
using namespace coreflow::contract;

namespace {
constexpr qint64 minute = 60000;

qint64 vmRssKiB()
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    return -1;
}

qint64 settledRssKiB()
{
    malloc_trim(0);
    return vmRssKiB();
}

class BenchCourier final : public EscrowCourier {
public:
    QHash<QString, SessionBinding> bindings;
    qint64 delivered = 0;
    qint64 deliveredBytes = 0;
    bool answer = true;

    std::optional<SessionBinding> currentBinding(const QString &nodeId) const override
    {
        auto it = bindings.constFind(nodeId);
        return it == bindings.constEnd() ? std::nullopt : std::optional<SessionBinding>(it.value());
    }
    void deliver(const QString &, const QByteArray &raw, qint64, Delivered done) override
    {
        ++delivered;
        deliveredBytes += raw.size();
        if (!answer)
            return;
        // A node's ACK: { projection, sequence, state: "admitted" } read back from the renewal it got.
        const QJsonObject renewal = QJsonDocument::fromJson(raw).object().value(QStringLiteral("renewal")).toObject();
        const QByteArray ack = Envelope::compact(QJsonObject{{QStringLiteral("projection"), renewal.value(QStringLiteral("projection"))},
                                                             {QStringLiteral("sequence"), renewal.value(QStringLiteral("sequence"))},
                                                             {QStringLiteral("state"), QStringLiteral("admitted")}});
        auto frame = Envelope::parse(Envelope::response(QString(method::applyRuntimeNetworkDnsLeaseRenewal), u"b", "{}", ack));
        done(&frame.value(), nullptr);
    }
};

QJsonObject projectionFor(int node)
{
    const QString id = QStringLiteral("projection-%1").arg(node);
    return QJsonObject{{QStringLiteral("id"), id},
                       {QStringLiteral("generation"), 7},
                       {QStringLiteral("digest"), QString::fromLatin1(QCryptographicHash::hash(id.toUtf8(), QCryptographicHash::Sha256).toHex())}};
}

// A full run on Cloudly's grid (15-minute windows every 10 minutes). 32 such windows span 325 minutes, so
// a run that still fits the 4 h horizon started 90 minutes ago (Cloudly tops runs up as windows pass).
QByteArray holdRequest(const SessionBinding &b, qint64 firstNotBefore, int renewals)
{
    const QJsonObject projection = projectionFor(b.nodeId.mid(5).toInt());
    QJsonArray array;
    for (int k = 0; k < renewals; ++k) {
        const qint64 notBefore = firstNotBefore + k * 10 * minute;
        // Ed25519-sized opaque signature (64 bytes, base64): the relay never reads it.
        const QByteArray signature = QCryptographicHash::hash(QByteArray::number(k) + b.sessionId.toUtf8(), QCryptographicHash::Sha512).toBase64();
        array.append(QJsonObject{{QStringLiteral("nodeId"), b.nodeId},
                                 {QStringLiteral("sessionId"), b.sessionId},
                                 {QStringLiteral("projection"), projection},
                                 {QStringLiteral("sequence"), 1000 + k},
                                 {QStringLiteral("notBefore"), double(notBefore)},
                                 {QStringLiteral("expiresAt"), double(notBefore + 15 * minute)},
                                 {QStringLiteral("signature"), QString::fromLatin1(signature)}});
    }
    return Envelope::compact(QJsonObject{{QStringLiteral("session"), b.toJson()},
                                         {QStringLiteral("projection"), projection},
                                         {QStringLiteral("renewals"), array}});
}
} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    // One log line per offer is the relay's behaviour; here it would measure the terminal instead.
    QLoggingCategory::setFilterRules(QStringLiteral("coreflow.*.info=false\ncoreflow.*.warning=false"));
    int nodes = 10000, renewals = 32;
    QString jsonPath;
    const QStringList args = app.arguments();
    for (int i = 1; i < args.size(); ++i) {
        if (args[i] == QLatin1String("--nodes") && i + 1 < args.size())
            nodes = args[++i].toInt();
        else if (args[i] == QLatin1String("--renewals") && i + 1 < args.size())
            renewals = args[++i].toInt();
        else if (args[i] == QLatin1String("--json") && i + 1 < args.size())
            jsonPath = args[++i];
    }

    const qint64 wallStart = QDateTime::currentMSecsSinceEpoch();
    // The run's windows start on the 10-minute grid, 90 minutes ago, 15 s past a grid point.
    const qint64 t0 = (wallStart / (10 * minute)) * (10 * minute) - 90 * minute;
    ManualClock clock(t0 + 90 * minute + 15000);
    RelayTiming timing;
    BenchCourier courier;
    for (int i = 0; i < nodes; ++i) {
        const QString id = QStringLiteral("node-%1").arg(i, 5, 10, QLatin1Char('0'));
        courier.bindings.insert(id, SessionBinding{id, QStringLiteral("cluster-bench"), QStringLiteral("session-%1-2f9c6b1e").arg(i), 3});
    }
    // The baseline is taken before Cloudly's side composes the requests; the requests are freed again
    // before the second reading, so the difference is what custody keeps resident.
    const qint64 rssBefore = settledRssKiB();
    QList<QByteArray> requests;
    requests.reserve(nodes);
    for (const auto &b : std::as_const(courier.bindings))
        requests.append(Envelope::request(QString(method::holdRuntimeNetworkDnsLeaseRenewals), u"h", holdRequest(b, t0, renewals)));
    qint64 requestBytes = 0;
    for (const auto &r : requests)
        requestBytes += r.size();

    LeaseEscrow escrow(courier, clock, timing);

    // --- Custody: 10000 holds, applied one at a time from the event loop.
    QElapsedTimer t;
    t.start();
    int answered = 0, heldOk = 0;
    for (const QByteArray &raw : std::as_const(requests)) {
        auto frame = Envelope::parse(raw);
        escrow.hold(frame.value(), [&](QByteArray answer) {
            ++answered;
            heldOk += answer.contains("\"held\":") ? 1 : 0;
        });
    }
    while (answered < nodes)
        QCoreApplication::processEvents();
    const double holdMs = double(t.nsecsElapsed()) / 1e6;
    requests.clear();
    requests.squeeze();
    const qint64 rssAfter = settledRssKiB();

    // --- Release: the session is lost 15 s into a window (before its margin): nothing is due yet
    // except the previous, still-open window, which is offered at once to every node.
    t.restart();
    escrow.sessionLost();
    const double lossMs = double(t.nsecsElapsed()) / 1e6;
    const qint64 offersAtLoss = courier.delivered;
    // Then the window start + 30 s: the escrow's one timer fires and every node gets the new window.
    const qint64 due = escrow.releaseDueMs();
    t.restart();
    clock.advance(due - clock.nowMs());
    const double windowMs = double(t.nsecsElapsed()) / 1e6;
    const qint64 offersAtWindow = courier.delivered - offersAtLoss;
    // The same window start without the ACK round (offers composed and sent, answers pending).
    courier.answer = false;
    escrow.sessionDispatchable();
    escrow.sessionLost(); // re-offers the current window (answered: none) ...
    const qint64 nextDue = escrow.releaseDueMs();
    const qint64 before = courier.delivered;
    t.restart();
    clock.advance(nextDue - clock.nowMs());
    const double windowNoAckMs = double(t.nsecsElapsed()) / 1e6;
    const qint64 offersNoAck = courier.delivered - before;
    const qint64 heldRenewals = escrow.renewalCount();
    const qint64 accounted = escrow.retainedBytes();
    escrow.stop();

    // --- Re-registration wave: 10000 nodes registered under the old carrier.
    ManualClock waveClock(wallStart);
    QList<ReregistrationWave::Member> members;
    for (int i = 0; i < nodes; ++i)
        members.append(ReregistrationWave::Member{QStringLiteral("node-%1").arg(i, 5, 10, QLatin1Char('0')), quint64(i + 1), 1});
    qint64 closed = 0, firstAt = -1, lastAt = -1;
    int firings = 0;
    ReregistrationWave wave(waveClock, timing, [&] { return members; },
                            [&](const ReregistrationWave::Member &, qint64) {
                                ++closed;
                                if (firstAt < 0)
                                    firstAt = waveClock.nowMs();
                                lastAt = waveClock.nowMs();
                                return true;
                            });
    wave.carrierDispatchable(1, true);
    t.restart();
    wave.carrierDispatchable(2, true);
    qint64 previous = -1;
    while (wave.isRunning()) {
        const qint64 next = waveClock.nextDeadlineMs();
        if (next < 0)
            break;
        waveClock.advance(next - waveClock.nowMs());
        if (waveClock.nowMs() != previous)
            ++firings;
        previous = waveClock.nowMs();
    }
    const double waveMs = double(t.nsecsElapsed()) / 1e6;

    const qint64 rssDeltaKiB = rssAfter - rssBefore;
    QJsonObject result{
        {QStringLiteral("benchmark"), QStringLiteral("escrow")},
        {QStringLiteral("build"), QStringLiteral(COREFLOW_BUILD_VERSION)},
        {QStringLiteral("measuredAt"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate)},
        {QStringLiteral("host"), QSysInfo::machineHostName()},
        {QStringLiteral("nodes"), nodes},
        {QStringLiteral("renewalsPerRun"), renewals},
        {QStringLiteral("heldRenewals"), double(heldRenewals)},
        {QStringLiteral("holdsAccepted"), heldOk},
        {QStringLiteral("holdRequestBytesTotal"), double(requestBytes)},
        {QStringLiteral("holdIngestMs"), holdMs},
        {QStringLiteral("rssBeforeKiB"), double(rssBefore)},
        {QStringLiteral("rssAfterKiB"), double(rssAfter)},
        {QStringLiteral("rssDeltaKiB"), double(rssDeltaKiB)},
        {QStringLiteral("rssPerNodeBytes"), double(rssDeltaKiB) * 1024.0 / nodes},
        {QStringLiteral("escrowAccountedBytes"), double(accounted)},
        {QStringLiteral("releaseAtSessionLossMs"), lossMs},
        {QStringLiteral("offersAtSessionLoss"), double(offersAtLoss)},
        {QStringLiteral("releaseAtWindowStartMs"), windowMs},
        {QStringLiteral("offersAtWindowStart"), double(offersAtWindow)},
        {QStringLiteral("releaseAtWindowStartWithoutAckMs"), windowNoAckMs},
        {QStringLiteral("offersAtWindowStartWithoutAck"), double(offersNoAck)},
        {QStringLiteral("waveNodes"), double(closed)},
        {QStringLiteral("waveSpacingMs"), ReregistrationWave::spacingMs(nodes, timing)},
        {QStringLiteral("waveFirstCloseMs"), double(firstAt - wallStart)},
        {QStringLiteral("waveLastCloseMs"), double(lastAt - wallStart)},
        {QStringLiteral("waveTimerFirings"), firings},
        {QStringLiteral("waveComputeMs"), waveMs},
    };

    QTextStream out(stdout);
    out << QStringLiteral("escrow benchmark: %1 nodes x %2 renewals (in-process, fake node lane)\n").arg(nodes).arg(renewals);
    auto row = [&](const QString &what, const QString &value) { out << QStringLiteral("  %1 %2\n").arg(what, -46).arg(value); };
    row(QStringLiteral("holds accepted"), QStringLiteral("%1 / %2 (%3 renewals held)").arg(heldOk).arg(nodes).arg(heldRenewals));
    row(QStringLiteral("hold ingest (validate, slice, precedence)"), QStringLiteral("%1 ms").arg(holdMs, 0, 'f', 1));
    row(QStringLiteral("VmRSS before / after holds"), QStringLiteral("%1 KiB / %2 KiB").arg(rssBefore).arg(rssAfter));
    row(QStringLiteral("VmRSS for custody"), QStringLiteral("%1 MiB (%2 bytes per node)").arg(double(rssDeltaKiB) / 1024.0, 0, 'f', 1)
                                               .arg(double(rssDeltaKiB) * 1024.0 / nodes, 0, 'f', 0));
    row(QStringLiteral("escrow-accounted bytes"), QStringLiteral("%1 MiB").arg(double(accounted) / 1048576.0, 0, 'f', 1));
    row(QStringLiteral("release at session loss"), QStringLiteral("%1 ms for %2 offers").arg(lossMs, 0, 'f', 1).arg(offersAtLoss));
    row(QStringLiteral("release at a window start (+ACK)"), QStringLiteral("%1 ms for %2 offers").arg(windowMs, 0, 'f', 1).arg(offersAtWindow));
    row(QStringLiteral("release at a window start (no ACK)"), QStringLiteral("%1 ms for %2 offers").arg(windowNoAckMs, 0, 'f', 1).arg(offersNoAck));
    row(QStringLiteral("re-registration wave"), QStringLiteral("%1 nodes, spacing %2 ms, last close at %3 ms, %4 timer firings, %5 ms CPU")
                                                  .arg(closed)
                                                  .arg(ReregistrationWave::spacingMs(nodes, timing))
                                                  .arg(lastAt - wallStart)
                                                  .arg(firings)
                                                  .arg(waveMs, 0, 'f', 1));
    out.flush();

    if (!jsonPath.isEmpty()) {
        QDir().mkpath(QFileInfo(jsonPath).absolutePath());
        QFile f(jsonPath);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
            qWarning("cannot write %s", qPrintable(jsonPath));
            return 1;
        }
        f.write(QJsonDocument(result).toJson());
        out << "  results written to " << jsonPath << "\n";
    }
    return heldOk == nodes && closed == nodes ? 0 : 1;
}
