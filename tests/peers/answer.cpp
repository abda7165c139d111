#include "tests/peers/answer.h"

#include <QTimer>
#include <QWebSocket>

namespace coreflow::peers {

Answer Answer::respond(const QJsonObject &response)
{
    return respondRaw(PeerEnvelope::compact(response));
}

Answer Answer::respondRaw(const QByteArray &rawResponseJson)
{
    Answer a;
    a.kind = Kind::Response;
    a.rawResponse = rawResponseJson;
    return a;
}

Answer Answer::refuse(const PeerRefusal &refusal)
{
    return errorRaw(PeerEnvelope::compact(PeerEnvelope::errorJson(refusal)));
}

Answer Answer::refuse(QLatin1StringView name, const QString &reason)
{
    return refuse(PeerRefusal{QString(name), reason});
}

Answer Answer::errorRaw(const QByteArray &rawErrorJson, const QByteArray &rawRetryJson)
{
    Answer a;
    a.kind = Kind::Error;
    a.rawError = rawErrorJson;
    a.rawRetry = rawRetryJson;
    return a;
}

Answer Answer::silence()
{
    Answer a;
    a.kind = Kind::Silence;
    return a;
}

Answer Answer::dropConnection()
{
    Answer a;
    a.kind = Kind::Drop;
    return a;
}

Answer Answer::useDefault() { return Answer{}; }

Answer Answer::after(qint64 ms) const
{
    Answer a = *this;
    a.delayMs = ms;
    return a;
}

QByteArray deliverAnswer(QObject *context, QWebSocket *socket, const PeerFrame &request, const Answer &answer,
                         std::function<void()> onSent)
{
    QByteArray bytes;
    switch (answer.kind) {
    case Answer::Kind::Response:
        bytes = PeerEnvelope::response(request.method, request.correlationId, request.request, answer.rawResponse);
        break;
    case Answer::Kind::Error:
        bytes = PeerEnvelope::error(request.method, request.correlationId, request.request,
                                                 answer.rawError, answer.rawRetry);
        break;
    case Answer::Kind::Silence:
    case Answer::Kind::Default:
        return {};
    case Answer::Kind::Drop:
        break;
    }
    QPointer<QWebSocket> guard(socket);
    auto act = [guard, bytes, drop = answer.kind == Answer::Kind::Drop, onSent = std::move(onSent)] {
        if (!guard)
            return;
        if (drop) {
            guard->abort();
            return;
        }
        guard->sendTextMessage(QString::fromUtf8(bytes));
        if (onSent)
            onSent();
    };
    if (answer.delayMs > 0)
        QTimer::singleShot(answer.delayMs, context, act);
    else
        act();
    return bytes;
}

} // namespace coreflow::peers
