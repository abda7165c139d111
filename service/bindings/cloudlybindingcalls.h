#pragma once
// CloudlyBindingCalls: BindingCloudlyCalls on the relay's Cloudly session; every call bounded by
// cloudlyCallTimeoutMs (docs/contract.md §20.1). done() is called exactly once per call; calls still
// in flight when this object is destroyed are cancelled and never answered.
#include "service/bindings/bindingcloudlycalls.h"

#include <QSet>

namespace coreflow {

class CloudlyConnector;

class CloudlyBindingCalls final : public BindingCloudlyCalls {
public:
    CloudlyBindingCalls(CloudlyConnector &cloudly, qint64 timeoutMs);
    ~CloudlyBindingCalls() override;
    void call(const QString &method, const QByteArray &body, Done done) override;

private:
    CloudlyConnector &m_cloudly;
    qint64 m_timeoutMs;
    std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);
};

} // namespace coreflow
