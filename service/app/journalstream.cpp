#include "service/app/journalstream.h"

#include <QList>
#include <sys/stat.h>

namespace coreflow {

bool JournalStream::matches(const QByteArray &journalStream, int fd)
{
    const QList<QByteArray> parts = journalStream.split(':');
    if (parts.size() != 2)
        return false;
    bool devOk = false, inoOk = false;
    const qulonglong device = parts.at(0).toULongLong(&devOk);
    const qulonglong inode = parts.at(1).toULongLong(&inoOk);
    struct stat st {};
    if (!devOk || !inoOk || ::fstat(fd, &st) != 0)
        return false;
    return qulonglong(st.st_dev) == device && qulonglong(st.st_ino) == inode;
}

const char *JournalStream::priorityPrefix(QtMsgType type)
{
    switch (type) {
    case QtDebugMsg: return "<7>";
    case QtInfoMsg: return "<6>";
    case QtWarningMsg: return "<4>";
    case QtCriticalMsg: return "<3>";
    case QtFatalMsg: return "<2>";
    }
    return "<6>";
}

} // namespace coreflow
