#pragma once
// IngressRegistration: the project's validateClusterIngressRegistration (docs/contract.md §10.1;
// CI-15, CI-24). Pure.
//
// Wire shape (exact keys): { offer: ProtocolOffer, ingressId: id, nodeId: id, authorization: string }
// "id": non-empty, at most 256 characters, no control characters. authorization is the ingress'
// bearer (Secret): it must be a non-empty string, is never kept here and travels to Cloudly only inside
// the untouched request bytes. The offer is judged before this (contract::judgePeerOffer); read() checks only
// its shape.
//
// A refusal is request-invalid naming the field by its path ("field request.ingressId is missing"),
// never a value — an unknown member is "field <path> has a member the contract does not name"; the ingress lane answers it as cluster-ingress-registration-refused with reason
// registration-invalid and retryAfterMs 5000.
#include "shared/contract/result.h"

#include <QJsonObject>
#include <QString>

namespace coreflow {

class IngressRegistration {
public:
    static contract::Result<IngressRegistration> read(const QJsonObject &request, const QString &path);

    const QString &ingressId() const { return m_ingressId; }
    const QString &nodeId() const { return m_nodeId; }

private:
    QString m_ingressId;
    QString m_nodeId;
};

} // namespace coreflow
