#include "service/listener/tlshttpresponder.h"

#include "service/listener/listenerhttpconnection.h"
#include "service/transport/httpresponsehead.h"

namespace coreflow {

TlsHttpResponder::~TlsHttpResponder()
{
    // An answer left unfinished cannot be completed: the connection must not wait for it forever.
    m_observer = nullptr;
    if (m_connection && !m_over)
        m_connection->abortConnection();
}

void TlsHttpResponder::writeHead(int status, const QList<QPair<QByteArray, QByteArray>> &headers)
{
    if (!m_connection || m_over || m_headWritten)
        return;
    m_headWritten = true;
    m_connection->writeAnswer(httpResponseHead(status, headers));
}

void TlsHttpResponder::writeBody(QByteArrayView bytes)
{
    if (m_connection && !m_over && m_headWritten)
        m_connection->writeAnswer(bytes);
}

qint64 TlsHttpResponder::pendingBytes() const { return m_connection ? m_connection->pendingBytes() : 0; }

void TlsHttpResponder::finish()
{
    if (m_over)
        return;
    m_over = true;
    if (m_connection)
        m_connection->answerFinished(this); // may hand out the next request at once
}

void TlsHttpResponder::abort()
{
    if (m_over)
        return;
    m_over = true;
    if (ListenerHttpConnection *connection = m_connection) {
        m_connection = nullptr;
        connection->abortConnection();
    }
}

void TlsHttpResponder::connectionWritten()
{
    if (m_observer && !m_over)
        m_observer->responderWritten();
}

void TlsHttpResponder::connectionGone()
{
    m_connection = nullptr;
    if (m_observer && !m_over)
        m_observer->responderGone();
}

} // namespace coreflow
