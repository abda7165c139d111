#pragma once
// BindingCloudlyCalls: the bindings lane's two calls to Cloudly (docs/contract.md §6.9
// getClusterPlatformDesiredState, §12.5 reportClusterPlatformBindingStatus) and whether the session is
// dispatchable. CloudlyBindingCalls implements it on CloudlyConnector; unit tests give a double.
#include <QByteArray>
#include <QString>
#include <functional>

namespace coreflow {

class BindingCloudlyCalls {
public:
    struct Answer {
        bool answered = false;   // a response without an error
        QByteArray response;     // the response member's JSON text (answered)
        QString refusalName;     // Cloudly's error name, or the relay's transport refusal name
        QString words;           // Cloudly's own error text, or the transport refusal's text (value-free)
    };
    using Done = std::function<void(const Answer &answer)>;
    virtual ~BindingCloudlyCalls() = default;
    virtual void call(const QString &method, const QByteArray &body, Done done) = 0;
};

} // namespace coreflow
