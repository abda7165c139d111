#pragma once
// LoopbackIngress: the cluster ingress as the relay sees it on its listener, written against
// docs/contract.md "Ingress lane" (§10) only. A QWebSocket client that trusts exactly the given CA
// certificates and dials Options.url (wss://localhost:PORT/), like SimulatedPalletNode.
//
// Calls (ingress -> relay):
//   registerIngress(cb)  registerClusterIngress { offer: { sessionKind: Options.sessionKind, release },
//                        ingressId, nodeId, authorization: bearer } (registrationRequest() is the exact body);
//                        an answer without error marks it registered() and stores routeTableRevision.
//   pullRouteTable(cb)   getClusterIngressRouteTable { appliedRevision: <applied revision> | null }; a
//                        successful answer's routeTable (object or null) becomes routeTable() and its
//                        revision appliedRevision().
//   call(method, raw, cb, id)   any request, raw JSON inserted verbatim.
// Requests from the relay, answered by default (each scriptable with setHandler()/setAnswer()):
//   pushClusterIngressRouteTableChanged { revision } -> {} and then, when Options.pullOnHint, a pull.
//   getClusterTrafficStatistics { sinceMs, cursor, limit } -> trafficPage() (a fixed page of two items).
//   any other method -> "method-not-served: clusterIngress serves no method <name>".
#include "tests/peers/answer.h"
#include "tests/peers/receivedframe.h"

#include "tests/peers/peerenvelope.h"

#include <QHash>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QSslCertificate>
#include <QUrl>
#include <functional>
#include <optional>

class QWebSocket;

namespace coreflow::peers {

class LoopbackIngress : public QObject {
    Q_OBJECT
public:
    using Callback = std::function<void(const PeerFrame &answer)>;
    using Handler = std::function<Answer(const PeerFrame &frame, const QJsonObject &request)>;

    struct Options {
        QString ingressId = QStringLiteral("ingress-1");
        QString nodeId = QStringLiteral("node-ingress");
        QByteArray bearer = "ingress-bearer";              // request.authorization
        QString sessionKind = QStringLiteral("clusterIngress");
        QString release = QStringLiteral("33.1.0");        // offer.release
        QUrl url;                                          // wss://localhost:PORT/
        QList<QSslCertificate> caCertificates;             // trusted roots (nothing else)
        bool pullOnHint = true;                            // answer a hint by pulling the table
    };

    explicit LoopbackIngress(Options options, QObject *parent = nullptr);
    ~LoopbackIngress() override;

    // --- Connection --------------------------------------------------------------------------------
    void open();
    void close(int closeCode = 1000, const QString &reason = {});
    bool isConnected() const;
    QString lastError() const { return m_lastError; }

    // --- Calls (empty id: not connected, cb never runs) ---------------------------------------------
    QString registerIngress(Callback callback = {});
    QString pullRouteTable(Callback callback = {});
    QString call(const QString &method, const QByteArray &rawRequest, Callback callback = {}, const QString &correlationId = {});
    QByteArray registrationRequest() const;

    // --- State -------------------------------------------------------------------------------------
    bool registered() const { return m_registered; }
    std::optional<qint64> registrationRevision() const { return m_registrationRevision; } // routeTableRevision answered
    QJsonValue routeTable() const { return m_routeTable; }          // last pulled: object, null, or undefined (never pulled)
    QByteArray routeTableRaw() const { return m_routeTableRaw; }    // last pulled answer's response bytes
    std::optional<qint64> appliedRevision() const { return m_appliedRevision; }
    int pullCount() const { return m_pulls; }

    // --- Scripting ---------------------------------------------------------------------------------
    void setHandler(const QString &method, Handler handler);
    void setAnswer(const QString &method, const Answer &answer);
    static QByteArray trafficPage();   // the default getClusterTrafficStatistics response bytes

    // --- Observation -------------------------------------------------------------------------------
    QList<ReceivedFrame> requests(const QString &method) const;     // request-phase frames from the relay
    int requestCount(const QString &method) const { return int(requests(method).size()); }
    const QList<ReceivedFrame> &answers() const { return m_answers; }

Q_SIGNALS:
    void connected();
    void disconnected();
    void connectionFailed(const QString &error);
    void requestReceived(const QString &method);
    void routeTablePulled();
    void answerReceived(const QString &method, const QString &correlationId);

private:
    void onTextMessage(const QByteArray &utf8);
    Answer defaultAnswer(const PeerFrame &frame);

    Options m_options;
    QPointer<QWebSocket> m_socket;
    QString m_lastError;
    bool m_wasConnected = false;
    bool m_registered = false;
    std::optional<qint64> m_registrationRevision;
    QJsonValue m_routeTable = QJsonValue(QJsonValue::Undefined);
    QByteArray m_routeTableRaw;
    std::optional<qint64> m_appliedRevision;
    int m_pulls = 0;
    QHash<QString, Handler> m_handlers;
    QHash<QString, std::pair<QString, Callback>> m_pending;
    QList<ReceivedFrame> m_requests;
    QList<ReceivedFrame> m_answers;
    quint64 m_counter = 0;
};

} // namespace coreflow::peers
