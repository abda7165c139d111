#pragma once
// MainWindow: the coreflow-console desktop window.
//
//   header   identity line (relay node, build, contract release, listener origin) — "identityLabel";
//            connection line (connecting / connected / disconnected, retrying / access refused) —
//            "connectionLabel";
//            readiness banner — "readinessBanner": green "READY", red "NOT READY" with one line per
//            readiness refusal, amber when ready but parked, grey while there is no live connection
//            (then it says why and what the last snapshot showed).
//   tabs     "tabs": Overview first (HealthOverview: health, next action, each hop, the counts; problem
//            rows coloured), then Relay (Cloudly session, registration, listener, counters), Nodes,
//            Escrow, Ingress, Bindings, VPN, Backups (§18.1 backups), Events; each a TablePane (sortable, filterable; object
//            names "<pane>Table"/"<pane>Filter", panes: overview, relay, nodes, escrow, ingress,
//            bindings, vpn, backups, events). Failed or refused rows are coloured in every table
//            (RowTableModel::Row::problem); a tab's title counts its problems ("Escrow (2 · 1 failed)").
//
// The window only displays: it has no action that could reach the relay.
#include "console/statusclient.h"
#include "console/statusevent.h"
#include "shared/status/relaystatus.h"

#include <QMainWindow>
#include <optional>

class QLabel;
class QTabWidget;

namespace coreflow::console {

class BackupsTableModel;
class BindingsTableModel;
class EscrowTableModel;
class EventsTableModel;
class KeyValueTableModel;
class NodesTableModel;
class TablePane;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(const QString &socketPath, QWidget *parent = nullptr);

    // Follows a client: its state, snapshots and events. The client stays owned by the caller.
    void attachClient(StatusClient *client);

    void applySnapshot(const status::RelayStatus &status);
    void setConnectionState(StatusClient::State state, const QString &reason);
    void addEvent(const StatusEvent &event);

    QString identityText() const;
    QString connectionText() const;
    QString bannerText() const;
    TablePane *pane(const QString &name) const; // overview, relay, nodes, escrow, ingress, bindings, vpn, events
    QTabWidget *tabs() const { return m_tabs; }
    // Every text the window shows (labels, tab titles, every model cell): for tests and the canary check.
    QStringList allTexts() const;

private:
    void refreshBanner();

    QString m_socketPath;
    QLabel *m_identity;
    QLabel *m_connection;
    QLabel *m_banner;
    QTabWidget *m_tabs;
    KeyValueTableModel *m_overviewModel;
    KeyValueTableModel *m_relayModel;
    NodesTableModel *m_nodesModel;
    EscrowTableModel *m_escrowModel;
    KeyValueTableModel *m_ingressModel;
    BindingsTableModel *m_bindingsModel;
    KeyValueTableModel *m_vpnModel;
    BackupsTableModel *m_backupsModel;
    EventsTableModel *m_eventsModel;
    static constexpr int kBackupsTab = 7;
    static constexpr int kEventsTab = 8;
    QHash<QString, TablePane *> m_panes;
    std::optional<status::RelayStatus> m_status;
    StatusClient::State m_state = StatusClient::State::Connecting;
    QString m_stateReason;
};

} // namespace coreflow::console
