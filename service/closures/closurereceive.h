#pragma once
// ClosureReceive: one database closure fetched from Cloudly and restored into a node's Corestore
// (docs/contract.md §13.4 receive direction, §13.6; CS-68..CS-73). Steps:
//   0. Preconditions before anything (CS-64, CS-80): a dispatchable Cloudly session
//      (cloudly-session-unavailable), the node's endpoint (CORESTORE_ENDPOINT_UNKNOWN) and the control
//      credential (CorestoreCredentialEnrollmentError, corestore-credential-missing), judged by
//      CorestoreClient::prepareStream. A refusal here opened no stream at Cloudly and sent Corestore
//      nothing.
//   1. The node's Corestore is dialled (HttpClientPool::connectFor, D-130): reachable once TCP and TLS
//      are up; a dial or handshake failure, or kDialTimeoutMs (the §15 call bound) without it, is
//      CORESTORE_UNREACHABLE: POST <path> on node <id>: <failure> and nothing was asked of Cloudly.
//      The connection waits for the request; every later exit closes it.
//   2. openServiceDatabaseClosure { serviceId, backupId, nodeId, streamId } (a fresh UUID v4): Cloudly
//      answers the descriptor (exact-key read; it must name this stream, service, backup and node),
//      or a refusal (closure-refused naming Cloudly's refusal, e.g. NOT_FOUND).
//   3. POST /control/database-closures/restore?serviceId=<s>&backupId=<b> on the node's Corestore with
//      exactly Content-Length: sizeBytes, no Transfer-Encoding, no Content-Encoding, and the
//      descriptor's X-Corestore-Closure-Sha256 / X-Corestore-Closure-Receipt (CS-68); its body is an
//      HttpRequestBodyStream pulled as the connection's socket takes bytes; sent on the connection of
//      step 1.
//   4. Credit: grantServiceDatabaseClosureCredit keeps at most kMaxOutstandingCreditBytes granted and
//      not yet taken by Corestore's socket (CS-72); more is granted once the outstanding credit fell to
//      kGrantBelowBytes. So what the relay holds of a closure is at most 1 MiB, whatever the size, and
//      a Corestore slower than Cloudly slows the transfer (never buffers it).
//   5. Chunks must follow in offset order, within the credit and the size; the SHA-256 is computed as
//      they arrive, and the last bytes are handed to Corestore only once it matches the descriptor
//      (else closure-digest-mismatch, Corestore's request is cut before its body ends).
//   6. Corestore's answer { restored: true, sizeBytes, sha256 } (equal to what was sent) ->
//      completeServiceDatabaseClosure { streamId, sizeBytes, sha256, outcome: "restored" } (CS-69: the
//      stream is accepted only after Corestore answered). Another answer: the §12 failure classes.
// Progress: kProgressTimeoutMs without a byte moving (a chunk arriving, Corestore taking bytes) ends
// the transfer closure-transfer-stalled, side "cloudly" while the relay waits for chunks it granted
// credit for, else "node" (Corestore not taking bytes, or not answering after the last) (CS-71).
// Every exit cancels Corestore's request, drops the buffer and stops the timer (CS-73); Cloudly is
// told with abortServiceDatabaseClosure { side: "relay" | "node", reason } unless it aborted itself.
#include "service/closures/closuredescriptor.h"
#include "service/closures/closurestream.h"
#include "service/closures/closuretransfer.h"
#include "service/closures/streamingsha256.h"
#include "service/transport/httpclientrequest.h"
#include "service/transport/httprequestbodystream.h"
#include "service/transport/httpresponsereceiver.h"
#include "shared/contract/refusal.h"

#include <QByteArray>

namespace coreflow {

class Clock;
class ClockTimer;
class CloudlyConnector;
class CorestoreClient;

class ClosureReceive : public ClosureStream, private HttpResponseReceiver, private HttpRequestBodyStream {
    Q_OBJECT
public:
    static constexpr qint64 kMaxOutstandingCreditBytes = 1024 * 1024; // §13.4 receive credit
    static constexpr qint64 kGrantBelowBytes = 512 * 1024;
    static constexpr qsizetype kMaxAnswerBytes = 64 * 1024; // Corestore's JSON answer to a restore
    static constexpr qint64 kDialTimeoutMs = 10000;          // corestoreCallTimeoutMs (§15 "Bound", §20.2)

    ClosureReceive(CloudlyConnector &cloudly, CorestoreClient &corestore, Clock &clock, qint64 cloudlyCallTimeoutMs,
                   QString nodeId, QString serviceId, QString backupId, ClosureTransfer::RestoreDone done,
                   QObject *parent = nullptr);
    ~ClosureReceive() override;

    void start() override;
    void chunkArrived(quint64 offset, QByteArrayView payload) override;
    void abortedByCloudly(const QString &side, const QString &reason) override;

    qint64 sizeBytes() const { return m_descriptor.sizeBytes; }
    qint64 bytesReceived() const { return m_received; }
    qint64 bytesMoved() const override { return m_received; }
    std::optional<qint64> knownSizeBytes() const override;
    qint64 heldBytes() const override { return bufferedBytes(); }
    // Granted and not yet taken by Corestore's socket (tests: never above kMaxOutstandingCreditBytes).
    qint64 outstandingCredit() const { return m_granted - m_consumed; }
    qint64 bufferedBytes() const { return m_buffer.size() - m_bufferOffset; }

private:
    enum class Phase { Preparing, Dialing, Opening, Streaming, AwaitingCorestore, Completing, Ended };

    // HttpResponseReceiver (Corestore's answer to the restore)
    void responseHead(int status, const HttpHeaderPairs &headers) override;
    bool responseBodyRoom() const override { return m_answer.size() < kMaxAnswerBytes; }
    void responseBody(const char *data, qsizetype size) override;
    void responseComplete() override;
    void responseFailed(HttpClientFailure failure) override;
    void connectionEstablished() override;
    // HttpRequestBodyStream (the closure's bytes)
    qsizetype requestBodyRead(char *out, qsizetype max) override;
    void requestBodyDrained() override;

    // ClosureStream
    void releaseBytes() override;
    bool holdsBytes() const override { return !m_buffer.isEmpty(); }
    void deliverRefusal(const contract::Refusal &refusal) override;
    void deliverSuccess() override;
    void quiet() override;
    QString stateWord() const override;
    QString awaitedSide() const override;
    QString refusedWord() const override { return QStringLiteral("not restored"); }

    void dial();
    void dialTimedOut();
    void open();
    void onDescriptor(const QByteArray &response);
    void grantCredit();
    void complete(const QByteArray &sha256);
    bool awaitingCloudly() const;

    ClosureTransfer::RestoreDone m_done;
    Phase m_phase = Phase::Preparing;
    HttpClientRequest m_request;  // prepared by the preconditions, sent once the descriptor arrived
    ClosureDescriptor m_descriptor;
    QByteArray m_buffer;          // received, not yet taken by Corestore (at most the credit)
    qsizetype m_bufferOffset = 0;
    qint64 m_granted = 0;
    qint64 m_received = 0;
    qint64 m_consumed = 0;        // handed to Corestore's socket
    std::unique_ptr<ClockTimer> m_dialTimer; // the dial's bound (step 1)
    StreamingSha256 m_sha;
    bool m_digestChecked = false;
    int m_status = 0;
    QByteArray m_answer;
};

} // namespace coreflow
