#include "console/mainwindow.h"

#include "console/backupstablemodel.h"
#include "console/bindingstablemodel.h"
#include "console/escrowtablemodel.h"
#include "console/eventstablemodel.h"
#include "console/healthoverview.h"
#include "console/keyvaluetablemodel.h"
#include "console/nodestablemodel.h"
#include "console/tablepane.h"
#include "console/terminalview.h"

#include <QLabel>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace coreflow::console {

namespace {
const QString greenStyle = QStringLiteral("QLabel { background: #1e7e34; color: white; padding: 8px; font-weight: bold; }");
const QString redStyle = QStringLiteral("QLabel { background: #b02a37; color: white; padding: 8px; font-weight: bold; }");
const QString amberStyle = QStringLiteral("QLabel { background: #c77c02; color: white; padding: 8px; font-weight: bold; }");
const QString greyStyle = QStringLiteral("QLabel { background: #5c636a; color: white; padding: 8px; font-weight: bold; }");

QString yesNo(bool v) { return TerminalView::yesNo(v); }
QString optNumber(const std::optional<qint64> &v) { return v ? QString::number(*v) : QStringLiteral("-"); }
} // namespace

MainWindow::MainWindow(const QString &socketPath, QWidget *parent)
    : QMainWindow(parent), m_socketPath(socketPath), m_identity(new QLabel), m_connection(new QLabel), m_banner(new QLabel),
      m_tabs(new QTabWidget), m_overviewModel(new KeyValueTableModel), m_relayModel(new KeyValueTableModel), m_nodesModel(new NodesTableModel),
      m_escrowModel(new EscrowTableModel), m_ingressModel(new KeyValueTableModel), m_bindingsModel(new BindingsTableModel),
      m_vpnModel(new KeyValueTableModel), m_backupsModel(new BackupsTableModel), m_eventsModel(new EventsTableModel)
{
    setWindowTitle(tr("coreflow console"));
    m_identity->setObjectName(QStringLiteral("identityLabel"));
    m_identity->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_connection->setObjectName(QStringLiteral("connectionLabel"));
    m_banner->setObjectName(QStringLiteral("readinessBanner"));
    m_banner->setWordWrap(true);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tabs->setObjectName(QStringLiteral("tabs"));

    auto addPane = [this](const QString &name, const QString &title, RowTableModel *model) {
        auto *pane = new TablePane(name, model);
        m_panes.insert(name, pane);
        m_tabs->addTab(pane, title);
    };
    addPane(QStringLiteral("overview"), tr("Overview"), m_overviewModel);
    addPane(QStringLiteral("relay"), tr("Relay"), m_relayModel);
    addPane(QStringLiteral("nodes"), tr("Nodes"), m_nodesModel);
    addPane(QStringLiteral("escrow"), tr("Escrow"), m_escrowModel);
    addPane(QStringLiteral("ingress"), tr("Ingress"), m_ingressModel);
    addPane(QStringLiteral("bindings"), tr("Bindings"), m_bindingsModel);
    addPane(QStringLiteral("vpn"), tr("VPN"), m_vpnModel);
    addPane(QStringLiteral("backups"), tr("Backups"), m_backupsModel);
    addPane(QStringLiteral("events"), tr("Events"), m_eventsModel);
    // The bindings pane filters by state as well as by text (docs/contract.md §18.1 bindings[].status).
    m_panes[QStringLiteral("bindings")]->addColumnChoice(BindingsTableModel::kStatusColumn, tr("all states"),
                                                         {QStringLiteral("ready"), QStringLiteral("failed"), QStringLiteral("provisioning"),
                                                          QStringLiteral("reconciling"), QStringLiteral("ungranted"), QStringLiteral("committed"),
                                                          QStringLiteral("paused")});
    // Key/value panes keep the relay's order; the events pane opens newest-last in time order.
    for (const QString &kvName : {QStringLiteral("overview"), QStringLiteral("relay"), QStringLiteral("ingress"), QStringLiteral("vpn")})
        m_panes[kvName]->view()->sortByColumn(-1, Qt::AscendingOrder);

    auto *central = new QWidget;
    auto *layout = new QVBoxLayout(central);
    layout->addWidget(m_identity);
    layout->addWidget(m_connection);
    layout->addWidget(m_banner);
    layout->addWidget(m_tabs, 1);
    setCentralWidget(central);
    statusBar()->setObjectName(QStringLiteral("statusBar"));

    m_identity->setText(tr("coreflow relay — no snapshot yet"));
    setConnectionState(StatusClient::State::Connecting, tr("connecting to %1").arg(m_socketPath));
    resize(1100, 720);
}

void MainWindow::attachClient(StatusClient *client)
{
    connect(client, &StatusClient::stateChanged, this, &MainWindow::setConnectionState);
    connect(client, &StatusClient::snapshotReceived, this, &MainWindow::applySnapshot);
    connect(client, &StatusClient::eventReceived, this, &MainWindow::addEvent);
    setConnectionState(client->state(), client->stateReason());
}

void MainWindow::applySnapshot(const status::RelayStatus &s)
{
    m_status = s;
    const QString origin = s.listener.origin.isEmpty() ? tr("no listener origin") : s.listener.origin;
    m_identity->setText(tr("Relay %1 · build %2 · contract %3 · origin %4")
                            .arg(TerminalView::orDash(s.nodeId), TerminalView::orDash(s.build),
                                 TerminalView::orDash(s.contractRelease), origin));
    setWindowTitle(tr("coreflow console — %1").arg(TerminalView::orDash(s.nodeId)));

    QList<std::pair<QString, QString>> relay{
        {tr("Node"), TerminalView::orDash(s.nodeId)},
        {tr("Build"), TerminalView::orDash(s.build)},
        {tr("Contract release"), TerminalView::orDash(s.contractRelease)},
        {tr("Started (UTC)"), TerminalView::isoUtc(s.startedAtMs)},
        {tr("Snapshot generated (UTC)"), TerminalView::isoUtc(s.generatedAtMs)},
        {tr("Ready"), yesNo(s.ready)},
        {tr("Parked"), s.parked ? tr("yes: %1").arg(TerminalView::orDash(s.parkedLine)) : tr("no")},
        {tr("Cloudly connected"), yesNo(s.cloudly.connected)},
        {tr("Cloudly dispatchable"), yesNo(s.cloudly.dispatchable)},
        {tr("Cloudly carrier count"), QString::number(s.cloudly.carrierCount)},
        {tr("Identity renewal due (UTC)"), TerminalView::isoUtc(s.cloudly.identityRenewalDueMs)},
        {tr("Pinned credential"), s.cloudly.credentialId.isEmpty()
                                      ? QStringLiteral("-")
                                      : tr("%1 (generation %2)").arg(s.cloudly.credentialId).arg(s.cloudly.credentialGeneration)},
        {tr("Cloudly URL"), TerminalView::orDash(s.cloudly.url)},
        {tr("Cloudly last frame (UTC)"), TerminalView::isoUtc(s.cloudly.lastFrameAtMs)},
        {tr("Cloudly keepalive"), TerminalView::orDash(s.cloudly.keepalive)},
        {tr("Cloudly connected since (UTC)"), TerminalView::isoUtc(s.cloudly.connectedSinceMs)},
        {tr("Cloudly last error"), TerminalView::cloudlyLastError(s)},
        {tr("Cloudly next retry (UTC)"), TerminalView::isoUtc(s.cloudly.nextRetryAtMs)},
        {tr("Registration last sequence"),
         s.registration.lastSequence < 0 ? QStringLiteral("-") : QString::number(s.registration.lastSequence)},
        {tr("Registration last outcome"), TerminalView::orDash(s.registration.lastOutcome)},
        {tr("Registration outcome at (UTC)"), TerminalView::isoUtc(s.registration.lastAtMs)},
        {tr("Listener"), s.listener.listening ? tr("listening on %1:%2").arg(s.listener.address).arg(s.listener.port)
                                              : tr("not listening")},
        {tr("Listener origin"), TerminalView::orDash(s.listener.origin)},
        {tr("Listener note"), TerminalView::orDash(s.listener.note)},
        {tr("Listener certificate"), TerminalView::orDash(s.listener.certificateSubject)},
        {tr("Certificate not after (UTC)"), TerminalView::isoUtc(s.listener.certificateNotAfterMs)},
        {tr("Forwards"), QString::number(s.counters.forwards)},
        {tr("Pushes"), QString::number(s.counters.pushes)},
        {tr("Reconnects"), QString::number(s.counters.reconnects)},
        {tr("Re-registration waves"), QString::number(s.counters.reregistrationWaves)},
        {tr("Escrow offers delivered"), QString::number(s.counters.escrowOffersByOutcome.value(QStringLiteral("delivered")))},
        {tr("Escrow offers failed"), QString::number(s.counters.escrowOffersByOutcome.value(QStringLiteral("failed")))},
        {tr("Registry requests"), QString::number(s.counters.registryRequests)},
        {tr("Registry body bytes"), QString::number(s.counters.registryBodyBytes)},
        {tr("Status clients admitted"), QString::number(s.counters.statusClients)},
    };
    for (const auto &r : TerminalView::shownRefusals(s))
        relay.append({tr("Readiness refusal"), TerminalView::refusalLine(r)});
    for (auto it = s.counters.refusalsByName.constBegin(); it != s.counters.refusalsByName.constEnd(); ++it)
        relay.append({tr("Refusals: %1").arg(it.key()), QString::number(it.value())});
    m_relayModel->setPairs(relay);

    m_nodesModel->setNodes(s.nodes);
    m_escrowModel->setRuns(s.escrow);
    m_ingressModel->setPairs({{tr("Bound"), yesNo(s.ingress.bound)},
                              {tr("Route table revision"), optNumber(s.ingress.routeTableRevision)},
                              {tr("Routes"), QString::number(s.ingress.routeCount)},
                              {tr("Hostnames"), QString::number(s.ingress.hostnameCount)}});
    m_bindingsModel->setBindings(s.bindings);
    m_backupsModel->setLane(s.backups);
    m_vpnModel->setPairs({{tr("Bound"), yesNo(s.vpn.bound)},
                          {tr("Address"), s.vpn.address.isEmpty() ? QStringLiteral("-")
                                                                  : QStringLiteral("%1:%2").arg(s.vpn.address).arg(s.vpn.quicPort)},
                          {tr("Network revision"), optNumber(s.vpn.networkRevision)},
                          {tr("Members"), QString::number(s.vpn.memberCount)},
                          {tr("State"), s.vpn.lastFailure.isEmpty() ? s.vpn.state : QStringLiteral("%1 (%2)").arg(s.vpn.state, s.vpn.lastFailure)},
                          {tr("Public key"), s.vpn.publicKey.isEmpty() ? QStringLiteral("-") : s.vpn.publicKey},
                          {tr("Connected"), QStringLiteral("%1 of %2").arg(s.vpn.membersConnected).arg(s.vpn.memberCount)}});

    const HealthOverview overview(s);
    QList<KeyValueTableModel::Item> items{{tr("Health"), overview.verdict(), !overview.healthy()},
                                          {tr("Next action"), overview.nextAction(), !overview.healthy()}};
    int problems = 0;
    for (const auto &l : overview.hops() + overview.counts()) {
        items.append({l.key.left(1).toUpper() + l.key.mid(1), l.value, l.problem});
        problems += l.problem ? 1 : 0;
    }
    if (overview.certificateWarning())
        items.append({tr("Certificate"), tr("the relay does not renew its listener certificate while it runs: restarting it "
                                            "is the operator's job"),
                      true});
    m_overviewModel->setItems(items);

    auto counted = [](const QString &title, qsizetype total, int failed, const QString &word) {
        return failed ? QStringLiteral("%1 (%2 · %3 %4)").arg(title).arg(total).arg(failed).arg(word)
                      : QStringLiteral("%1 (%2)").arg(title).arg(total);
    };
    m_tabs->setTabText(0, problems == 1 ? tr("Overview (1 problem)")
                          : problems    ? tr("Overview (%1 problems)").arg(problems)
                                        : tr("Overview"));
    m_tabs->setTabText(2, counted(tr("Nodes"), s.nodes.size(), m_nodesModel->problemCount(), tr("troubled")));
    m_tabs->setTabText(3, counted(tr("Escrow"), s.escrow.size(), overview.escrowFailed(), tr("failed")));
    m_tabs->setTabText(5, counted(tr("Bindings"), s.bindings.size(), overview.bindingsFailed(), tr("failed")));
    const int backupsInFlight = m_backupsModel->inFlightCount();
    const int backupsRefused = m_backupsModel->problemCount();
    m_tabs->setTabText(kBackupsTab, backupsInFlight || backupsRefused
                                        ? counted(tr("Backups"), backupsInFlight, backupsRefused, tr("refused"))
                                        : tr("Backups"));
    statusBar()->showMessage(tr("Snapshot generated %1 UTC").arg(TerminalView::isoUtc(s.generatedAtMs)));
    refreshBanner();
}

void MainWindow::setConnectionState(StatusClient::State state, const QString &reason)
{
    if (state == StatusClient::State::Connected && m_state != StatusClient::State::Connected)
        m_eventsModel->clear(); // the relay replays its recent events to every new subscription
    m_state = state;
    m_stateReason = reason;
    switch (state) {
    case StatusClient::State::Connecting:
        m_connection->setText(tr("Connecting to %1…").arg(m_socketPath));
        break;
    case StatusClient::State::Connected:
        m_connection->setText(tr("Connected to %1 (live)").arg(m_socketPath));
        break;
    case StatusClient::State::Disconnected:
        m_connection->setText(tr("Disconnected: %1 — retrying").arg(reason));
        break;
    case StatusClient::State::Refused:
        m_connection->setText(tr("Access refused: %1").arg(reason));
        break;
    }
    refreshBanner();
}

void MainWindow::addEvent(const StatusEvent &event)
{
    m_eventsModel->addEvent(event);
    const int problems = m_eventsModel->problemCount();
    m_tabs->setTabText(kEventsTab, problems == 1 ? tr("Events (%1 · 1 failure)").arg(m_eventsModel->rowCount())
                          : problems    ? tr("Events (%1 · %2 failures)").arg(m_eventsModel->rowCount()).arg(problems)
                                        : tr("Events (%1)").arg(m_eventsModel->rowCount()));
}

void MainWindow::refreshBanner()
{
    QStringList lines;
    QString style;
    if (m_state != StatusClient::State::Connected) {
        style = greyStyle;
        switch (m_state) {
        case StatusClient::State::Refused: lines << tr("ACCESS REFUSED — %1").arg(m_stateReason); break;
        case StatusClient::State::Disconnected: lines << tr("DISCONNECTED — %1 (retrying)").arg(m_stateReason); break;
        default: lines << tr("CONNECTING — %1").arg(m_socketPath); break;
        }
        if (m_status)
            lines << tr("Last snapshot (%1 UTC) showed %2")
                         .arg(TerminalView::isoUtc(m_status->generatedAtMs), m_status->ready ? tr("READY") : tr("NOT READY"));
    } else if (m_status) {
        const auto &s = *m_status;
        if (s.ready) {
            lines << tr("READY");
            style = s.parked ? amberStyle : greenStyle;
        } else {
            lines << tr("NOT READY");
            style = redStyle;
        }
        for (const auto &r : TerminalView::shownRefusals(s))
            lines << QStringLiteral("• ") + TerminalView::refusalLine(r);
        if (s.parked)
            lines << tr("PARKED: %1").arg(TerminalView::orDash(s.parkedLine));
    }
    m_banner->setText(lines.join(QLatin1Char('\n')));
    m_banner->setStyleSheet(style);
}

QString MainWindow::identityText() const { return m_identity->text(); }
QString MainWindow::connectionText() const { return m_connection->text(); }
QString MainWindow::bannerText() const { return m_banner->text(); }
TablePane *MainWindow::pane(const QString &name) const { return m_panes.value(name); }

QStringList MainWindow::allTexts() const
{
    QStringList out{windowTitle()};
    for (const QLabel *label : findChildren<QLabel *>())
        out << label->text();
    for (int i = 0; i < m_tabs->count(); ++i)
        out << m_tabs->tabText(i);
    for (const TablePane *p : m_panes)
        out += p->model()->allText();
    out << statusBar()->currentMessage();
    return out;
}

} // namespace coreflow::console
