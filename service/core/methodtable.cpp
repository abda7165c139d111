#include "service/core/methodtable.h"

#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"

namespace coreflow {

MethodTable::MethodTable(QString laneName) : m_lane(std::move(laneName)) {}

void MethodTable::add(const QString &method, Handler handler) { m_handlers.insert(method, std::move(handler)); }

void MethodTable::remove(const QString &method)
{
    m_handlers.remove(method);
    m_nodeDataAnswers.remove(method);
}

void MethodTable::dispatch(const contract::Frame &request, const Caller &caller, const Reply &reply) const
{
    const auto it = m_handlers.constFind(request.method);
    if (it == m_handlers.constEnd()) {
        const QByteArrayView echoed = m_withheldEcho.contains(request.method) ? QByteArrayView("{}") : QByteArrayView(request.request);
        if (m_unserved) {
            reply(contract::Envelope::refusal(request.method, request.correlationId, echoed, *m_unserved));
            return;
        }
        reply(contract::Envelope::refusal(request.method, request.correlationId, echoed,
                                          contract::Refusal{QString(contract::refusal::methodNotServed),
                                                            QStringLiteral("%1 serves no method %2")
                                                                .arg(m_lane, contract::RefusalQuote::nameOrLength(request.method))}));
        return;
    }
    it.value()(request, caller, reply);
}

QByteArray MethodTable::refusalFor(const contract::Frame &request, const contract::Refusal &refusal)
{
    return contract::Envelope::refusal(request.method, request.correlationId, request.request, refusal);
}

QByteArray MethodTable::responseFor(const contract::Frame &request, QByteArrayView rawResponse)
{
    return contract::Envelope::response(request.method, request.correlationId, request.request, rawResponse);
}

} // namespace coreflow
