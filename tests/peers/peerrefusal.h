#pragma once
// PeerRefusal: a named "no" as a loopback peer reads and writes it, written from docs/contract.md §3.1
// (never the relay's shared/contract/refusal.h; tests/layering/check_layers.py enforces that).
// On the wire: error = { text: "<name>: <reason>", data: { name: "<name>", ...data } }.
#include <QJsonObject>
#include <QString>

namespace coreflow::peers {

struct PeerRefusal {
    QString name;
    QString reason;
    QJsonObject data = {}; // members of error.data beside "name" (e.g. peerOffer/ownOffer, §2.2)

    QString text() const { return name + QStringLiteral(": ") + reason; }
    bool operator==(const PeerRefusal &) const = default;
};

} // namespace coreflow::peers
