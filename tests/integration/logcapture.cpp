#include "tests/integration/logcapture.h"

#include <QMutex>

namespace coreflow::testing {

namespace {
QMutex g_mutex;
QStringList g_lines;
QtMessageHandler g_previous = nullptr;

void capture(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    {
        QMutexLocker lock(&g_mutex);
        g_lines.append(qFormatLogMessage(type, context, message));
    }
    if (g_previous)
        g_previous(type, context, message);
}
} // namespace

void LogCapture::install()
{
    if (m_installed)
        return;
    m_installed = true;
    qSetMessagePattern(QStringLiteral("%{type} %{category}: %{message}"));
    g_previous = qInstallMessageHandler(capture);
}

LogCapture::~LogCapture()
{
    if (m_installed)
        qInstallMessageHandler(g_previous);
}

QStringList LogCapture::lines() const
{
    QMutexLocker lock(&g_mutex);
    return g_lines;
}

bool LogCapture::contains(const QString &needle) const { return count(needle) > 0; }

int LogCapture::count(const QString &needle) const
{
    QMutexLocker lock(&g_mutex);
    int n = 0;
    for (const QString &line : g_lines)
        n += line.contains(needle) ? 1 : 0;
    return n;
}

void LogCapture::clear()
{
    QMutexLocker lock(&g_mutex);
    g_lines.clear();
}

} // namespace coreflow::testing
