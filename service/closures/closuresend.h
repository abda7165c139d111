#pragma once
// ClosureSend: one database closure sent to Cloudly (docs/contract.md §13.4 send direction, §13.5;
// CS-65..CS-67, CS-70, CS-71, CS-73). Steps:
//   1. POST /control/database-closures/export { serviceId, backupId } on the node's Corestore
//      (CorestoreClient::prepareStream: endpoint, credential). 404 no-database: closure-absent; any
//      other non-2xx: the §12 failure classes. A 2xx must state Content-Length,
//      X-Corestore-Closure-Sha256 and X-Corestore-Closure-Receipt, else CORESTORE_UNREACHABLE
//      "unreadable answer (<header>)"; the body is not read yet.
//   2. offerServiceDatabaseClosure { descriptor } (stream id: a fresh UUID v4; size, digest and
//      receipt as Corestore stated them). Cloudly's permit only allows the send (CS-67); a refusal or
//      a permit for another stream: closure-refused.
//   3. The export's body is read only while fewer than kMaxUnwrittenBytes wait on the Cloudly socket
//      (HttpResponseReceiver::responseBodyRoom), cut into binary chunk frames of at most the permit's
//      maxChunkBytes (and 262144), each handed to the socket at once; the SHA-256 is computed as the
//      bytes cross. Nothing else is held: one chunk being filled.
//   4. After the last byte: digest or size other than stated -> abortServiceDatabaseClosure
//      { side: "relay", reason: "closure-digest-mismatch" } and closure-digest-mismatch; else
//      completeServiceDatabaseClosure { streamId, sizeBytes, sha256, outcome: "sent" }. Only its
//      receipt (same stream, size and digest) counts as stored (CS-67); anything else is
//      closure-refused (closure-digest-mismatch when Cloudly's size or digest differ).
// Progress: from the export request to the last chunk, kProgressTimeoutMs without a byte moving
// (read from Corestore or taken by the Cloudly socket) ends the transfer
// "closure-transfer-stalled: <side> went quiet after <n> of <size> bytes": side "cloudly" when the
// socket's backlog is what holds the export, else "node" (CS-71); Cloudly is told with an abort.
// Every exit cancels the export (closing its connection), stops the timer and drops the chunk
// (ClosureStream's one way out).
#include "service/closures/closurechunkframe.h"
#include "service/closures/closuretransfer.h"
#include "service/closures/closurestream.h"
#include "service/closures/streamingsha256.h"
#include "service/transport/httprequestbodystream.h"
#include "service/transport/httpresponsereceiver.h"
#include "shared/contract/refusal.h"

#include <QByteArray>

namespace coreflow {

class Clock;
class CloudlyConnector;
class CorestoreClient;

class ClosureSend : public ClosureStream, private HttpResponseReceiver, private HttpRequestBodyStream {
    Q_OBJECT
public:
    static constexpr qsizetype kMaxUnwrittenBytes = 4 * 1024 * 1024; // §13.4 send pacing
    static constexpr qsizetype kMaxErrorBodyBytes = 64 * 1024;       // a refusal's body read at most

    ClosureSend(CloudlyConnector &cloudly, CorestoreClient &corestore, Clock &clock, qint64 cloudlyCallTimeoutMs,
                QString nodeId, QString serviceId, QString backupId, ClosureTransfer::SendDone done,
                QObject *parent = nullptr);
    ~ClosureSend() override;

    void start() override;
    void chunkArrived(quint64 offset, QByteArrayView payload) override;
    void abortedByCloudly(const QString &side, const QString &reason) override;
    void socketDrained() override;

    qint64 sizeBytes() const { return m_sizeBytes; }
    qint64 bytesSent() const { return m_sent; }
    qint64 bytesMoved() const override { return m_sent; }
    std::optional<qint64> knownSizeBytes() const override;
    qint64 heldBytes() const override { return chunkPayloadBytes() + m_early.size(); }

private:
    enum class Phase { Preparing, Exporting, Offering, Streaming, Completing, Ended };

    // HttpResponseReceiver (the export)
    void responseHead(int status, const HttpHeaderPairs &headers) override;
    bool responseBodyRoom() const override;
    void responseBody(const char *data, qsizetype size) override;
    void responseComplete() override;
    void responseFailed(HttpClientFailure failure) override;
    // HttpRequestBodyStream (the export's small JSON body)
    qsizetype requestBodyRead(char *out, qsizetype max) override;

    // ClosureStream
    void releaseBytes() override;
    bool holdsBytes() const override { return !m_chunk.isEmpty(); }
    // The payload bytes in the chunk being filled (m_chunk holds the frame's 24 header bytes first).
    qsizetype chunkPayloadBytes() const { return qMax<qsizetype>(0, m_chunk.size() - ClosureChunkFrame::kHeaderBytes); }
    // A fresh frame for the next chunk: one allocation of header and maximal payload, the header's room.
    void startChunk();
    void deliverRefusal(const contract::Refusal &refusal) override;
    void deliverSuccess() override;
    void quiet() override;
    QString stateWord() const override;
    QString awaitedSide() const override;
    QString refusedWord() const override { return QStringLiteral("not sent"); }

    void offer();
    void onPermit(const QByteArray &response);
    void sendChunk();
    void take(const char *data, qsizetype size);
    void finishExport();
    void complete();
    void onReceipt(const QByteArray &response);
    // Every refusal of a send: Cloudly is told (side "relay", abortReason) when abortReason is given.
    void fail(const contract::Refusal &refusal, const QString &abortReason);

    ClosureTransfer::SendDone m_done;
    ClosureReceipt m_receiptOut;
    Phase m_phase = Phase::Preparing;
    QByteArray m_requestBody;
    qsizetype m_requestBodyOffset = 0;
    int m_status = 0;
    QByteArray m_errorBody;
    qint64 m_sizeBytes = 0;
    QByteArray m_statedSha256;
    QByteArray m_receipt;
    qsizetype m_maxChunkBytes = 0;
    QByteArray m_chunk;   // the chunk frame being filled: 24 header bytes (written when sent), then the payload (D-138)
    QByteArray m_early;   // body bytes read with the head, before the permit (at most one read)
    qint64 m_read = 0;    // export bytes read
    qint64 m_sent = 0;    // bytes handed to the Cloudly socket as chunks
    StreamingSha256 m_sha;
    mutable bool m_heldBySocket = false; // the socket's backlog is what holds the export
    bool m_exportComplete = false; // the export's last byte was read
};

} // namespace coreflow
