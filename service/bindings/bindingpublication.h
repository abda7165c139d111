#pragma once
// PROVISIONAL (h-bindrec): replaced by the lead's seam on main.
#include "shared/secret.h"

#include <QString>
#include <functional>

namespace coreflow {

struct BindingPublicationRequest {
    QString nodeId, serviceId, bindingName, capability, organizationId, clusterId, grantOperation;
    qint64 grantGeneration = 0;
};

struct BindingPublicationOutcome {
    enum class Kind { Published, Failed, Held, Committed };
    Kind kind = Kind::Failed;
    QString line;
};

class BindingPublication {
public:
    using Done = std::function<void(const BindingPublicationOutcome &)>;
    virtual ~BindingPublication() = default;
    virtual void publish(const BindingPublicationRequest &request, Secret material, Done done) = 0;
    virtual void forget(const QString &grantOperation) = 0;
    virtual bool holdsReceipt(const QString &grantOperation) const = 0;
};

} // namespace coreflow
