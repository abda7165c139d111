#include "service/bindings/cloudlybindingcalls.h"

#include "service/cloudly/cloudlyconnector.h"

namespace coreflow {

CloudlyBindingCalls::CloudlyBindingCalls(CloudlyConnector &cloudly, qint64 timeoutMs) : m_cloudly(cloudly), m_timeoutMs(timeoutMs) {}

CloudlyBindingCalls::~CloudlyBindingCalls() { *m_alive = false; }

void CloudlyBindingCalls::call(const QString &method, const QByteArray &body, Done done)
{
    std::weak_ptr<bool> alive = m_alive;
    m_cloudly.call(method, body, m_timeoutMs, [alive, done = std::move(done)](const CloudlyConnector::CallResult &r) {
        if (alive.expired())
            return;
        Answer a;
        if (!r.delivered) {
            a.refusalName = r.refusal.name;
            a.words = r.refusal.text();
        } else if (r.answer.hasError()) {
            const contract::Refusal refusal = r.answer.errorRefusal();
            a.refusalName = refusal.name;
            a.words = refusal.text();
        } else {
            a.answered = true;
            a.response = QByteArray(r.answer.response.data(), r.answer.response.size());
        }
        done(a);
    });
}

} // namespace coreflow
