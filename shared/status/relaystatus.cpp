#include "shared/status/relaystatus.h"

#include <QJsonArray>

namespace coreflow::status {

namespace {
QJsonValue optInt(const std::optional<qint64> &v) { return v ? QJsonValue(double(*v)) : QJsonValue(QJsonValue::Null); }
QJsonValue optStr(const std::optional<QString> &v) { return v ? QJsonValue(*v) : QJsonValue(QJsonValue::Null); }
std::optional<qint64> readOptInt(const QJsonValue &v)
{
    return v.isDouble() ? std::optional<qint64>(qint64(v.toDouble())) : std::nullopt;
}
std::optional<QString> readOptStr(const QJsonValue &v) { return v.isString() ? std::optional<QString>(v.toString()) : std::nullopt; }
qint64 i64(const QJsonObject &o, const char *k) { return qint64(o.value(QLatin1String(k)).toDouble()); }
QString str(const QJsonObject &o, const char *k) { return o.value(QLatin1String(k)).toString(); }
bool bln(const QJsonObject &o, const char *k) { return o.value(QLatin1String(k)).toBool(); }
QJsonObject obj(const QJsonObject &o, const char *k) { return o.value(QLatin1String(k)).toObject(); }
QJsonArray arr(const QJsonObject &o, const char *k) { return o.value(QLatin1String(k)).toArray(); }
QJsonObject countsJson(const QMap<QString, qint64> &counts)
{
    QJsonObject out;
    for (auto it = counts.constBegin(); it != counts.constEnd(); ++it)
        out.insert(it.key(), double(it.value()));
    return out;
}
QMap<QString, qint64> readCounts(const QJsonObject &o)
{
    QMap<QString, qint64> out;
    for (auto it = o.constBegin(); it != o.constEnd(); ++it)
        out.insert(it.key(), qint64(it.value().toDouble()));
    return out;
}
} // namespace

QJsonObject RelayStatus::toJson() const
{
    QJsonArray refusalsJson;
    for (const auto &r : refusals)
        refusalsJson.append(QJsonObject{{QStringLiteral("hop"), r.hop},
                                        {QStringLiteral("peerOffer"), optStr(r.peerOffer)},
                                        {QStringLiteral("ownOffer"), optStr(r.ownOffer)},
                                        {QStringLiteral("line"), r.line}});
    QJsonArray nodesJson;
    for (const auto &n : nodes)
        nodesJson.append(QJsonObject{{QStringLiteral("nodeId"), n.nodeId},
                                     {QStringLiteral("sinceMs"), double(n.sinceMs)},
                                     {QStringLiteral("carrierCount"), double(n.carrierCount)},
                                     {QStringLiteral("lastMethod"), n.lastMethod},
                                     {QStringLiteral("lastForwardAtMs"), double(n.lastForwardAtMs)},
                                     {QStringLiteral("forwardsInFlight"), n.forwardsInFlight},
                                     {QStringLiteral("lastFrameAtMs"), double(n.lastFrameAtMs)},
                                     {QStringLiteral("keepalive"), n.keepalive},
                                     {QStringLiteral("remoteAddress"), n.remoteAddress},
                                     {QStringLiteral("offeredRelease"), n.offeredRelease},
                                     {QStringLiteral("connectedAtMs"), double(n.connectedAtMs)},
                                     {QStringLiteral("bytesReceived"), double(n.bytesReceived)},
                                     {QStringLiteral("bytesSent"), double(n.bytesSent)}});
    QJsonArray escrowJson;
    for (const auto &e : escrow)
        escrowJson.append(QJsonObject{{QStringLiteral("nodeId"), e.nodeId},
                                      {QStringLiteral("projectionId"), e.projectionId},
                                      {QStringLiteral("projectionGeneration"), double(e.projectionGeneration)},
                                      {QStringLiteral("renewalCount"), e.renewalCount},
                                      {QStringLiteral("currentWindowStartMs"), double(e.currentWindowStartMs)},
                                      {QStringLiteral("currentWindowEndMs"), double(e.currentWindowEndMs)},
                                      {QStringLiteral("nextWindowStartMs"), double(e.nextWindowStartMs)},
                                      {QStringLiteral("lastOfferResult"), e.lastOfferResult},
                                      {QStringLiteral("authorityUntilMs"), double(e.authorityUntilMs)}});
    QJsonArray bindingsJson;
    for (const auto &b : bindings)
        bindingsJson.append(QJsonObject{{QStringLiteral("name"), b.name},
                                        {QStringLiteral("capability"), b.capability},
                                        {QStringLiteral("nodeId"), b.nodeId},
                                        {QStringLiteral("serviceId"), b.serviceId},
                                        {QStringLiteral("status"), b.status},
                                        {QStringLiteral("reason"), b.reason},
                                        {QStringLiteral("grantOperation"), b.grantOperation},
                                        {QStringLiteral("grantGeneration"), double(b.grantGeneration)},
                                        {QStringLiteral("attempts"), b.attempts},
                                        {QStringLiteral("nextRetryAtMs"), double(b.nextRetryAtMs)}});
    QJsonArray vpnMembersJson;
    for (const auto &m : vpn.members)
        vpnMembersJson.append(QJsonObject{{QStringLiteral("nodeId"), m.nodeId},
                                          {QStringLiteral("address"), m.address},
                                          {QStringLiteral("connected"), m.connected},
                                          {QStringLiteral("lastHandshakeAtMs"), double(m.lastHandshakeAtMs)},
                                          {QStringLiteral("packetsIn"), double(m.packetsIn)},
                                          {QStringLiteral("bytesIn"), double(m.bytesIn)},
                                          {QStringLiteral("packetsOut"), double(m.packetsOut)},
                                          {QStringLiteral("bytesOut"), double(m.bytesOut)},
                                          {QStringLiteral("drops"), countsJson(m.drops)}});
    QJsonArray operationsJson;
    for (const auto &op : backups.operations)
        operationsJson.append(QJsonObject{{QStringLiteral("kind"), op.kind},
                                          {QStringLiteral("nodeId"), op.nodeId},
                                          {QStringLiteral("serviceId"), op.serviceId},
                                          {QStringLiteral("backupId"), op.backupId},
                                          {QStringLiteral("startedAtMs"), double(op.startedAtMs)},
                                          {QStringLiteral("step"), op.step},
                                          {QStringLiteral("stepsDone"), op.stepsDone},
                                          {QStringLiteral("stepsTotal"), op.stepsTotal}});
    QJsonArray transfersJson;
    for (const auto &t : backups.transfers)
        transfersJson.append(QJsonObject{{QStringLiteral("streamId"), t.streamId},
                                         {QStringLiteral("direction"), t.direction},
                                         {QStringLiteral("nodeId"), t.nodeId},
                                         {QStringLiteral("serviceId"), t.serviceId},
                                         {QStringLiteral("backupId"), t.backupId},
                                         {QStringLiteral("startedAtMs"), double(t.startedAtMs)},
                                         {QStringLiteral("state"), t.state},
                                         {QStringLiteral("bytesMoved"), double(t.bytesMoved)},
                                         {QStringLiteral("sizeBytes"), optInt(t.sizeBytes)},
                                         {QStringLiteral("awaiting"), t.awaiting}});
    QJsonArray recentJson;
    for (const auto &r : backups.recent)
        recentJson.append(QJsonObject{{QStringLiteral("streamId"), r.streamId},
                                      {QStringLiteral("direction"), r.direction},
                                      {QStringLiteral("nodeId"), r.nodeId},
                                      {QStringLiteral("serviceId"), r.serviceId},
                                      {QStringLiteral("backupId"), r.backupId},
                                      {QStringLiteral("startedAtMs"), double(r.startedAtMs)},
                                      {QStringLiteral("endedAtMs"), double(r.endedAtMs)},
                                      {QStringLiteral("bytesMoved"), double(r.bytesMoved)},
                                      {QStringLiteral("sizeBytes"), optInt(r.sizeBytes)},
                                      {QStringLiteral("outcome"), r.outcome}});
    const QJsonObject backupsJson{{QStringLiteral("operations"), operationsJson},
                                  {QStringLiteral("transfers"), transfersJson},
                                  {QStringLiteral("recent"), recentJson},
                                  {QStringLiteral("closureBytesSent"), double(backups.closureBytesSent)},
                                  {QStringLiteral("closureBytesReceived"), double(backups.closureBytesReceived)},
                                  {QStringLiteral("transfersByOutcome"), countsJson(backups.transfersByOutcome)}};
    QJsonArray corestoreNodesJson;
    for (const auto &n : corestore.nodes)
        corestoreNodesJson.append(QJsonObject{{QStringLiteral("nodeId"), n.nodeId},
                                              {QStringLiteral("endpointPublished"), n.endpointPublished},
                                              {QStringLiteral("lastCallOutcome"), n.lastCallOutcome},
                                              {QStringLiteral("lastCallAtMs"), double(n.lastCallAtMs)}});
    QJsonObject offerCounts;
    for (auto it = counters.escrowOffersByOutcome.constBegin(); it != counters.escrowOffersByOutcome.constEnd(); ++it)
        offerCounts.insert(it.key(), double(it.value()));
    QJsonObject refusalCounts;
    for (auto it = counters.refusalsByName.constBegin(); it != counters.refusalsByName.constEnd(); ++it)
        refusalCounts.insert(it.key(), double(it.value()));

    return QJsonObject{
        {QStringLiteral("build"), build},
        {QStringLiteral("contractRelease"), contractRelease},
        {QStringLiteral("nodeId"), nodeId},
        {QStringLiteral("startedAtMs"), double(startedAtMs)},
        {QStringLiteral("generatedAtMs"), double(generatedAtMs)},
        {QStringLiteral("ready"), ready},
        {QStringLiteral("refusals"), refusalsJson},
        {QStringLiteral("parked"), parked},
        {QStringLiteral("parkedLine"), parkedLine},
        {QStringLiteral("cloudly"),
         QJsonObject{{QStringLiteral("connected"), cloudly.connected},
                     {QStringLiteral("dispatchable"), cloudly.dispatchable},
                     {QStringLiteral("carrierCount"), double(cloudly.carrierCount)},
                     {QStringLiteral("identityRenewalDueMs"), double(cloudly.identityRenewalDueMs)},
                     {QStringLiteral("credentialId"), cloudly.credentialId},
                     {QStringLiteral("credentialGeneration"), double(cloudly.credentialGeneration)},
                     {QStringLiteral("url"), cloudly.url},
                     {QStringLiteral("lastFrameAtMs"), double(cloudly.lastFrameAtMs)},
                     {QStringLiteral("keepalive"), cloudly.keepalive},
                     {QStringLiteral("connectedSinceMs"), double(cloudly.connectedSinceMs)},
                     {QStringLiteral("lastErrorClass"), cloudly.lastErrorClass},
                     {QStringLiteral("nextRetryAtMs"), double(cloudly.nextRetryAtMs)}}},
        {QStringLiteral("registration"),
         QJsonObject{{QStringLiteral("lastSequence"), double(registration.lastSequence)},
                     {QStringLiteral("lastOutcome"), registration.lastOutcome},
                     {QStringLiteral("lastAtMs"), double(registration.lastAtMs)}}},
        {QStringLiteral("listener"),
         QJsonObject{{QStringLiteral("listening"), listener.listening},
                     {QStringLiteral("address"), listener.address},
                     {QStringLiteral("port"), listener.port},
                     {QStringLiteral("origin"), listener.origin},
                     {QStringLiteral("note"), listener.note},
                     {QStringLiteral("certificateSubject"), listener.certificateSubject},
                     {QStringLiteral("certificateNotAfterMs"), double(listener.certificateNotAfterMs)}}},
        {QStringLiteral("nodes"), nodesJson},
        {QStringLiteral("escrow"), escrowJson},
        {QStringLiteral("ingress"),
         QJsonObject{{QStringLiteral("bound"), ingress.bound},
                     {QStringLiteral("routeTableRevision"), optInt(ingress.routeTableRevision)},
                     {QStringLiteral("routeCount"), ingress.routeCount},
                     {QStringLiteral("hostnameCount"), ingress.hostnameCount}}},
        {QStringLiteral("bindings"), bindingsJson},
        {QStringLiteral("vpn"),
         QJsonObject{{QStringLiteral("bound"), vpn.bound},
                     {QStringLiteral("address"), vpn.address},
                     {QStringLiteral("quicPort"), vpn.quicPort},
                     {QStringLiteral("networkRevision"), optInt(vpn.networkRevision)},
                     {QStringLiteral("memberCount"), vpn.memberCount},
                     {QStringLiteral("publicKey"), vpn.publicKey},
                     {QStringLiteral("state"), vpn.state},
                     {QStringLiteral("lastFailure"), vpn.lastFailure},
                     {QStringLiteral("networkExpiresAtMs"), double(vpn.networkExpiresAtMs)},
                     {QStringLiteral("membersConnected"), vpn.membersConnected},
                     {QStringLiteral("members"), vpnMembersJson},
                     {QStringLiteral("drops"), countsJson(vpn.drops)}}},
        {QStringLiteral("corestore"),
         QJsonObject{{QStringLiteral("credential"), corestore.credential},
                     {QStringLiteral("failureCode"), corestore.failureCode},
                     {QStringLiteral("recipientKeyId"), corestore.recipientKeyId},
                     {QStringLiteral("recipientGeneration"), double(corestore.recipientGeneration)},
                     {QStringLiteral("enrolledAtMs"), double(corestore.enrolledAtMs)},
                     {QStringLiteral("nodes"), corestoreNodesJson}}},
        {QStringLiteral("backups"), backupsJson},
        {QStringLiteral("clockSkew"),
         QJsonObject{{QStringLiteral("suspected"), clockSkew.suspected},
                     {QStringLiteral("source"), clockSkew.source},
                     {QStringLiteral("nodeId"), clockSkew.nodeId},
                     {QStringLiteral("observedAtMs"), double(clockSkew.observedAtMs)},
                     {QStringLiteral("windowStartMs"), double(clockSkew.windowStartMs)},
                     {QStringLiteral("skewMs"), double(clockSkew.skewMs)}}},
        {QStringLiteral("counters"),
         QJsonObject{{QStringLiteral("forwards"), double(counters.forwards)},
                     {QStringLiteral("pushes"), double(counters.pushes)},
                     {QStringLiteral("reconnects"), double(counters.reconnects)},
                     {QStringLiteral("refusalsByName"), refusalCounts},
                     {QStringLiteral("refusalsLastHour"), double(counters.refusalsLastHour)},
                     {QStringLiteral("reregistrationWaves"), double(counters.reregistrationWaves)},
                     {QStringLiteral("escrowOffersByOutcome"), offerCounts},
                     {QStringLiteral("registryRequests"), double(counters.registryRequests)},
                     {QStringLiteral("registryBodyBytes"), double(counters.registryBodyBytes)},
                     {QStringLiteral("statusClients"), double(counters.statusClients)},
                     {QStringLiteral("timers"), double(counters.timers)}}},
    };
}

RelayStatus RelayStatus::fromJson(const QJsonObject &o)
{
    RelayStatus s;
    s.build = str(o, "build");
    s.contractRelease = str(o, "contractRelease");
    s.nodeId = str(o, "nodeId");
    s.startedAtMs = i64(o, "startedAtMs");
    s.generatedAtMs = i64(o, "generatedAtMs");
    s.ready = bln(o, "ready");
    for (const auto &v : arr(o, "refusals")) {
        const QJsonObject r = v.toObject();
        s.refusals.append(ReadinessRefusal{str(r, "hop"), readOptStr(r.value(QStringLiteral("peerOffer"))),
                                           readOptStr(r.value(QStringLiteral("ownOffer"))), str(r, "line")});
    }
    s.parked = bln(o, "parked");
    s.parkedLine = str(o, "parkedLine");
    const QJsonObject c = obj(o, "cloudly");
    s.cloudly = CloudlySessionStatus{bln(c, "connected"), bln(c, "dispatchable"), i64(c, "carrierCount"),
                                     i64(c, "identityRenewalDueMs"), str(c, "credentialId"),
                                     i64(c, "credentialGeneration"), str(c, "url"), i64(c, "lastFrameAtMs"),
                                     str(c, "keepalive"), i64(c, "connectedSinceMs"), str(c, "lastErrorClass"),
                                     i64(c, "nextRetryAtMs")};
    const QJsonObject reg = obj(o, "registration");
    s.registration = RegistrationStatus{reg.contains(QStringLiteral("lastSequence")) ? i64(reg, "lastSequence") : -1,
                                        str(reg, "lastOutcome"), i64(reg, "lastAtMs")};
    const QJsonObject l = obj(o, "listener");
    s.listener = ListenerStatus{bln(l, "listening"), str(l, "address"), int(i64(l, "port")), str(l, "origin"), str(l, "note"),
                                str(l, "certificateSubject"), i64(l, "certificateNotAfterMs")};
    for (const auto &v : arr(o, "nodes")) {
        const QJsonObject n = v.toObject();
        s.nodes.append(CarriedNode{str(n, "nodeId"), i64(n, "sinceMs"), i64(n, "carrierCount"), str(n, "lastMethod"),
                                   i64(n, "lastForwardAtMs"), int(i64(n, "forwardsInFlight")), i64(n, "lastFrameAtMs"),
                                   str(n, "keepalive"), str(n, "remoteAddress"), str(n, "offeredRelease"),
                                   i64(n, "connectedAtMs"), i64(n, "bytesReceived"), i64(n, "bytesSent")});
    }
    for (const auto &v : arr(o, "escrow")) {
        const QJsonObject e = v.toObject();
        s.escrow.append(EscrowRun{str(e, "nodeId"), str(e, "projectionId"), i64(e, "projectionGeneration"),
                                  int(i64(e, "renewalCount")), i64(e, "currentWindowStartMs"),
                                  i64(e, "currentWindowEndMs"), i64(e, "nextWindowStartMs"), str(e, "lastOfferResult"),
                                  i64(e, "authorityUntilMs")});
    }
    const QJsonObject in = obj(o, "ingress");
    s.ingress = IngressStatus{bln(in, "bound"), readOptInt(in.value(QStringLiteral("routeTableRevision"))),
                              int(i64(in, "routeCount")), int(i64(in, "hostnameCount"))};
    for (const auto &v : arr(o, "bindings")) {
        const QJsonObject b = v.toObject();
        s.bindings.append(PlatformBinding{str(b, "name"), str(b, "capability"), str(b, "nodeId"), str(b, "status"), str(b, "reason"),
                                          str(b, "serviceId"), str(b, "grantOperation"), i64(b, "grantGeneration"),
                                          int(i64(b, "attempts")), i64(b, "nextRetryAtMs")});
    }
    const QJsonObject vpn = obj(o, "vpn");
    s.vpn.bound = bln(vpn, "bound");
    s.vpn.address = str(vpn, "address");
    s.vpn.quicPort = int(i64(vpn, "quicPort"));
    s.vpn.networkRevision = readOptInt(vpn.value(QStringLiteral("networkRevision")));
    s.vpn.memberCount = int(i64(vpn, "memberCount"));
    s.vpn.publicKey = str(vpn, "publicKey");
    if (vpn.contains(QStringLiteral("state")))
        s.vpn.state = str(vpn, "state");
    s.vpn.lastFailure = str(vpn, "lastFailure");
    s.vpn.networkExpiresAtMs = i64(vpn, "networkExpiresAtMs");
    s.vpn.membersConnected = int(i64(vpn, "membersConnected"));
    s.vpn.drops = readCounts(obj(vpn, "drops"));
    for (const auto &v : arr(vpn, "members")) {
        const QJsonObject m = v.toObject();
        s.vpn.members.append(VpnMemberStatus{str(m, "nodeId"), str(m, "address"), bln(m, "connected"), i64(m, "lastHandshakeAtMs"),
                                             i64(m, "packetsIn"), i64(m, "bytesIn"), i64(m, "packetsOut"), i64(m, "bytesOut"),
                                             readCounts(obj(m, "drops"))});
    }
    const QJsonObject cs = obj(o, "corestore");
    if (cs.contains(QStringLiteral("credential")))
        s.corestore.credential = str(cs, "credential");
    s.corestore.failureCode = str(cs, "failureCode");
    s.corestore.recipientKeyId = str(cs, "recipientKeyId");
    s.corestore.recipientGeneration = i64(cs, "recipientGeneration");
    s.corestore.enrolledAtMs = i64(cs, "enrolledAtMs");
    for (const auto &v : arr(cs, "nodes")) {
        const QJsonObject n = v.toObject();
        s.corestore.nodes.append(CorestoreNode{str(n, "nodeId"), bln(n, "endpointPublished"),
                                               n.contains(QStringLiteral("lastCallOutcome")) ? str(n, "lastCallOutcome") : QStringLiteral("none"),
                                               i64(n, "lastCallAtMs")});
    }
    const QJsonObject bk = obj(o, "backups");
    for (const auto &v : arr(bk, "operations")) {
        const QJsonObject op = v.toObject();
        s.backups.operations.append(BackupOperationStatus{str(op, "kind"), str(op, "nodeId"), str(op, "serviceId"), str(op, "backupId"),
                                                          i64(op, "startedAtMs"), str(op, "step"), int(i64(op, "stepsDone")),
                                                          int(i64(op, "stepsTotal"))});
    }
    for (const auto &v : arr(bk, "transfers")) {
        const QJsonObject t = v.toObject();
        s.backups.transfers.append(ClosureTransferStatus{str(t, "streamId"), str(t, "direction"), str(t, "nodeId"), str(t, "serviceId"),
                                                         str(t, "backupId"), i64(t, "startedAtMs"), str(t, "state"), i64(t, "bytesMoved"),
                                                         readOptInt(t.value(QStringLiteral("sizeBytes"))), str(t, "awaiting")});
    }
    for (const auto &v : arr(bk, "recent")) {
        const QJsonObject r = v.toObject();
        s.backups.recent.append(ClosureOutcomeStatus{str(r, "streamId"), str(r, "direction"), str(r, "nodeId"), str(r, "serviceId"),
                                                     str(r, "backupId"), i64(r, "startedAtMs"), i64(r, "endedAtMs"), i64(r, "bytesMoved"),
                                                     readOptInt(r.value(QStringLiteral("sizeBytes"))), str(r, "outcome")});
    }
    s.backups.closureBytesSent = i64(bk, "closureBytesSent");
    s.backups.closureBytesReceived = i64(bk, "closureBytesReceived");
    s.backups.transfersByOutcome = readCounts(obj(bk, "transfersByOutcome"));
    const QJsonObject skew = obj(o, "clockSkew");
    s.clockSkew.suspected = bln(skew, "suspected");
    if (skew.contains(QStringLiteral("source")))
        s.clockSkew.source = str(skew, "source");
    s.clockSkew.nodeId = str(skew, "nodeId");
    s.clockSkew.observedAtMs = i64(skew, "observedAtMs");
    s.clockSkew.windowStartMs = i64(skew, "windowStartMs");
    s.clockSkew.skewMs = i64(skew, "skewMs");
    const QJsonObject cnt = obj(o, "counters");
    s.counters.forwards = i64(cnt, "forwards");
    s.counters.pushes = i64(cnt, "pushes");
    s.counters.reconnects = i64(cnt, "reconnects");
    const QJsonObject rbn = obj(cnt, "refusalsByName");
    for (auto it = rbn.constBegin(); it != rbn.constEnd(); ++it)
        s.counters.refusalsByName.insert(it.key(), qint64(it.value().toDouble()));
    s.counters.refusalsLastHour = i64(cnt, "refusalsLastHour");
    s.counters.reregistrationWaves = i64(cnt, "reregistrationWaves");
    const QJsonObject offers = obj(cnt, "escrowOffersByOutcome");
    for (auto it = offers.constBegin(); it != offers.constEnd(); ++it)
        s.counters.escrowOffersByOutcome.insert(it.key(), qint64(it.value().toDouble()));
    s.counters.registryRequests = i64(cnt, "registryRequests");
    s.counters.registryBodyBytes = i64(cnt, "registryBodyBytes");
    s.counters.statusClients = i64(cnt, "statusClients");
    s.counters.timers = i64(cnt, "timers");
    return s;
}

} // namespace coreflow::status
