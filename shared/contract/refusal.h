#pragma once
// Refusal: a named "no" on the wire. docs/contract.md "Refusals"; ../shared/reference/envelope.md.
// On the wire: error = { text: "<name>: <reason>", data: { name: "<name>" } }.
// A reason is composed by the relay from value-free facts only (method names, node ids, field names,
// counts, durations); it never quotes a body, a header value or secret material.
#include <QJsonObject>
#include <QString>

namespace coreflow::contract {

struct Refusal {
    QString name;
    QString reason;
    // Further value-free members of error.data beside "name" (e.g. peerOffer/ownOffer of
    // protocol-offer-refused). Never secret material.
    QJsonObject data = {};

    QString text() const { return name + QStringLiteral(": ") + reason; }
    QJsonObject toErrorJson() const;
    // Reads { text, data: { name } } back; a text without data.name yields the part before ": ".
    static Refusal fromErrorJson(const QJsonObject &error);
    bool operator==(const Refusal &) const = default;
};

} // namespace coreflow::contract
