#pragma once
// CorestoreEndpoint: one node's Corestore control endpoint as the relay dials it (docs/contract.md §15
// "Endpoint" and "Paths"). Built from IClusterNode.data.corestore.endpoint; from() refuses what is not
// an https URL with a host and without user info, query or fragment (plain http only for a loopback
// host: test peers), naming why in value-free words.
//
// targetFor(route): the endpoint's path with every trailing '/' removed, then the route, which starts
// with exactly one '/' ("/corestore/" + "/control/inventory" -> "/corestore/control/inventory").
#include <QByteArray>
#include <QString>
#include <QUrl>
#include <optional>

namespace coreflow {

class CorestoreEndpoint {
public:
    static std::optional<CorestoreEndpoint> from(const QUrl &url, QString *why);

    const QUrl &url() const { return m_url; }
    // scheme, host and port: the key of the endpoint's connection pool.
    const QUrl &origin() const { return m_origin; }
    QByteArray targetFor(const QByteArray &route) const;
    bool operator==(const CorestoreEndpoint &other) const { return m_url == other.m_url; }

private:
    QUrl m_url;
    QUrl m_origin;
    QByteArray m_pathPrefix; // percent-encoded, no trailing '/'
};

} // namespace coreflow
