#pragma once
// SimulatedPalletNode: one Pallet node runtime as the relay sees it on its listener, written against
// docs/contract.md "Node lane" only. A QWebSocket client that trusts exactly the given CA certificates
// (normally TestCertificateAuthority::caCertificate()) and dials Options.url (wss://localhost:PORT/).
//
// Calls (node -> relay -> Cloudly):
//   registerSession(cb)    registerPalletRuntimeSession with
//                          { offer: { sessionKind: "palletRuntime", release }, nodeId, authorization: bearer,
//                            nodeInstanceNonce }; a successful answer's `session` is stored (session()).
//   call(method, raw, cb, id)       any request; raw JSON inserted verbatim; caller-chosen correlation id
//                                   (empty: "<nodeId>-<n>"), so two nodes can use the same ids.
//   callWithSession(method, extra, cb, id)   request { session: <stored binding>, ...extra }.
//   sendRaw(frame)         bytes verbatim as one text frame (malformed-frame tests).
// Pushes (Cloudly -> relay -> node): applyRuntimeAssignment, applyRuntimeNetworkSigningAuthority,
//   applyRuntimeNetworkProjection, applyRuntimeNetworkDnsLeaseRenewal are answered by default with
//   { acknowledged: true, nodeId: Options.nodeId }; any other method with
//   "method-not-served: palletRuntime serves no method <name>". Scriptable per method (setPushHandler /
//   setPushAnswer, the same Answer type as LoopbackCloudly: response, refusal, silence, drop, delay).
#include "tests/peers/answer.h"
#include "tests/peers/receivedframe.h"

#include "tests/peers/peerenvelope.h"
#include "tests/peers/peersessionbinding.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QSslCertificate>
#include <QSslError>
#include <QUrl>
#include <functional>
#include <optional>

class QWebSocket;

namespace coreflow::peers {

class SimulatedPalletNode : public QObject {
    Q_OBJECT
public:
    // Receives the response-phase frame answering a call (check frame.hasError()/errorRefusal()).
    using Callback = std::function<void(const PeerFrame &answer)>;
    using PushHandler = std::function<Answer(const PeerFrame &frame, const QJsonObject &request)>;

    struct Options {
        QString nodeId = QStringLiteral("node-a");
        QByteArray bearer = "node-bearer";           // sent as request.authorization
        QString release = QStringLiteral("33.1.0");  // offer.release
        QString nodeInstanceNonce;                   // empty: a fresh UUID per SimulatedPalletNode
        QUrl url;                                    // wss://localhost:PORT/
        QList<QSslCertificate> caCertificates;       // trusted roots (nothing else is trusted)
    };

    explicit SimulatedPalletNode(Options options, QObject *parent = nullptr);
    ~SimulatedPalletNode() override;

    // --- Connection --------------------------------------------------------------------------------
    // Dials Options.url (or `url` when given). Emits connected() or, on failure, connectionFailed().
    void open(const QUrl &url = {});
    void close(int closeCode = 1000, const QString &reason = {});
    void abort();
    bool isConnected() const;
    // TLS errors of the last dial (e.g. host name mismatch, expired, untrusted). Never ignored.
    const QList<QSslError> &sslErrors() const { return m_sslErrors; }
    QString lastError() const { return m_lastError; }
    int closeCode() const { return m_closeCode; }     // last close code seen from the peer
    QString closeReason() const { return m_closeReason; }

    // --- Calls -------------------------------------------------------------------------------------
    // Returns the correlation id used, or an empty string when not connected (cb never runs).
    QString registerSession(Callback callback = {}, const QString &correlationId = {});
    QString call(const QString &method, const QByteArray &rawRequest, Callback callback = {},
                 const QString &correlationId = {});
    QString call(const QString &method, const QJsonObject &request, Callback callback = {},
                 const QString &correlationId = {});
    QString callWithSession(const QString &method, const QJsonObject &extraFields = {}, Callback callback = {},
                            const QString &correlationId = {});
    bool sendRaw(const QByteArray &frame);
    // The registerPalletRuntimeSession request body this node sends (for byte-exact comparisons).
    QByteArray registrationRequest() const;

    // The binding from the last successful registration.
    std::optional<PeerSessionBinding> session() const { return m_session; }
    QJsonObject sessionJson() const { return m_session ? m_session->toJson() : QJsonObject{}; }
    // Replace the stored binding (e.g. to send a foreign/stale binding in a negative test).
    void setSession(const std::optional<PeerSessionBinding> &binding) { m_session = binding; }
    const Options &options() const { return m_options; }
    QString nodeId() const { return m_options.nodeId; }

    // --- Push scripting ----------------------------------------------------------------------------
    void setPushHandler(const QString &method, PushHandler handler);
    void setPushAnswer(const QString &method, const Answer &answer);
    void clearPushHandlers();
    Answer defaultPushAnswer(const PeerFrame &frame) const;

    // --- Observation -------------------------------------------------------------------------------
    const QList<ReceivedFrame> &pushes() const { return m_pushes; }     // request-phase frames received
    QList<ReceivedFrame> pushes(const QString &method) const;
    int pushCount(const QString &method) const;
    QByteArray lastPushRawRequest(const QString &method) const;
    const QList<ReceivedFrame> &answers() const { return m_answers; }   // response-phase frames received
    std::optional<ReceivedFrame> answerFor(const QString &correlationId) const; // latest with that id
    int pendingCallCount() const { return int(m_pending.size()); }

Q_SIGNALS:
    void connected();
    void disconnected();
    void connectionFailed(const QString &error);
    void sessionRegistered(const coreflow::peers::PeerSessionBinding &binding);
    void sessionRefused(const coreflow::peers::PeerRefusal &refusal);
    void pushReceived(const QString &method);
    void answerReceived(const QString &method, const QString &correlationId);

private:
    void onTextMessage(const QByteArray &utf8);
    QString nextId();

    Options m_options;
    QPointer<QWebSocket> m_socket;
    QList<QSslError> m_sslErrors;
    QString m_lastError;
    int m_closeCode = 0;
    QString m_closeReason;
    bool m_wasConnected = false;
    std::optional<PeerSessionBinding> m_session;
    QHash<QString, PushHandler> m_pushHandlers;
    QHash<QString, std::pair<QString, Callback>> m_pending; // id -> (method, callback)
    QList<ReceivedFrame> m_pushes;
    QList<ReceivedFrame> m_answers;
    quint64 m_counter = 0;
};

} // namespace coreflow::peers
