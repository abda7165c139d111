#pragma once
// MethodTable: the methods one lane serves. The relay has two, as separate objects — the
// Cloudly-facing table of its outbound session and the node-facing table of its listener — so neither
// lane can answer the other's methods (docs/contract.md §5, CL-01).
//
// A handler receives the parsed request frame and a Reply that sends exactly one answer frame on the
// lane the request came from. A method without a handler is answered
// "method-not-served: <lane> serves no method <name>" (envelope.md: never silence).
#include "shared/contract/envelope.h"

#include <QHash>
#include <QSet>
#include <optional>
#include <functional>

namespace coreflow {

class NodeConnection;

// Who sent a request: on the node lane, the connection it arrived on (authority comes from the lane,
// never from a body field); on the Cloudly lane, nobody but the relay's own session.
struct Caller {
    NodeConnection *connection = nullptr;
};

class MethodTable {
public:
    using Reply = std::function<void(QByteArray answerFrame)>;
    using Handler = std::function<void(const contract::Frame &request, const Caller &caller, Reply reply)>;

    explicit MethodTable(QString laneName);

    void add(const QString &method, Handler handler);
    void remove(const QString &method);
    bool serves(const QString &method) const { return m_handlers.contains(method); }
    QStringList methods() const { return m_handlers.keys(); }
    const QString &laneName() const { return m_lane; }

    // While set, a method without a handler is answered with this refusal instead of method-not-served
    // (the Cloudly lane answers relay-starting until the relay opens for dispatch, D-01).
    void setUnservedRefusal(std::optional<contract::Refusal> refusal) { m_unserved = std::move(refusal); }
    // Refusals of `method` this table answers itself (not served, the unserved refusal) echo `{}` as
    // their request instead of the request's bytes: its body carries a bearer (§14, D-79).
    void withholdEcho(const QString &method) { m_withheldEcho.insert(method); }
    // The answers of `method` carry only bytes a node sent or is sent (a push routed to a node and its
    // acknowledgement), never a relay-held secret: the transport need not wipe them (§19.4). Any other
    // method's answer counts as secret-bearing. remove() forgets it.
    void markAnswersNodeDataOnly(const QString &method) { m_nodeDataAnswers.insert(method); }
    bool answersCarryNodeDataOnly(const QString &method) const { return m_nodeDataAnswers.contains(method); }

    // Calls the method's handler, or answers method-not-served.
    void dispatch(const contract::Frame &request, const Caller &caller, const Reply &reply) const;

    // Convenience answers for handlers.
    static QByteArray refusalFor(const contract::Frame &request, const contract::Refusal &refusal);
    static QByteArray responseFor(const contract::Frame &request, QByteArrayView rawResponse);

private:
    QString m_lane;
    QHash<QString, Handler> m_handlers;
    std::optional<contract::Refusal> m_unserved;
    QSet<QString> m_withheldEcho;
    QSet<QString> m_nodeDataAnswers;
};

} // namespace coreflow
