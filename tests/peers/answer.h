#pragma once
// Answer: what a scripted loopback peer does with one request it received (LoopbackCloudly for relay
// calls, SimulatedPalletNode for pushes).
//
//   Answer::respond({{"accepted", true}})          response-phase frame with this response object
//   Answer::respondRaw(R"({"accepted":true})")     response bytes inserted verbatim (byte-exact tests)
//   Answer::refuse(refusal::relayNodeUnknown, "…") error = { text: "<name>: <reason>", data: { name } }
//   Answer::errorRaw(R"({"text":"x"})", retryRaw)  error (and optional retry) members verbatim
//   Answer::silence()                              never answer
//   Answer::dropConnection()                       abort the socket instead of answering
//   Answer::useDefault()                           the peer's default behaviour (from a scripted handler)
//   any of the above .after(ms)                    answer after ms milliseconds (QTimer; 0 = at once)
//
// The answered frame always echoes the request's method, correlation id and raw request bytes.
#include "tests/peers/peerenvelope.h"
#include "tests/peers/peerrefusal.h"

#include <QByteArray>
#include <QJsonObject>
#include <QPointer>
#include <QString>
#include <functional>

class QObject;
class QWebSocket;

namespace coreflow::peers {

struct Answer {
    enum class Kind { Response, Error, Silence, Drop, Default };

    Kind kind = Kind::Default;
    QByteArray rawResponse; // Kind::Response: the response object's JSON
    QByteArray rawError;    // Kind::Error: the error object's JSON
    QByteArray rawRetry;    // Kind::Error: optional retry object's JSON (empty: none)
    qint64 delayMs = 0;     // >0: answer after this many milliseconds

    static Answer respond(const QJsonObject &response);
    static Answer respondRaw(const QByteArray &rawResponseJson);
    static Answer refuse(const PeerRefusal &refusal);
    static Answer refuse(QLatin1StringView name, const QString &reason);
    static Answer errorRaw(const QByteArray &rawErrorJson, const QByteArray &rawRetryJson = {});
    static Answer silence();
    static Answer dropConnection();
    static Answer useDefault();

    // A copy of this answer delayed by delayMs milliseconds.
    Answer after(qint64 delayMs) const;
};

// Sends `answer` for `request` on `socket` (now or after answer.delayMs; a socket gone by then is
// skipped). `context` bounds the delay timer's life. Kind::Default must be resolved by the caller.
// onSent (optional) runs right after a Response/Error frame was written (not for Silence/Drop).
// Returns the frame bytes (empty for Silence/Drop) — sent or scheduled.
QByteArray deliverAnswer(QObject *context, QWebSocket *socket, const PeerFrame &request, const Answer &answer,
                         std::function<void()> onSent = {});

} // namespace coreflow::peers
