#include "shared/status/statussocketplace.h"

#include <QFile>
#include <QFileInfo>

#include <sys/stat.h>

namespace coreflow::status {

namespace {
bool writableByOthers(mode_t mode) { return (mode & (S_IWGRP | S_IWOTH)) != 0; }
QString octal(mode_t mode) { return QString::number(mode & 07777, 8).rightJustified(4, QLatin1Char('0')); }
} // namespace

std::optional<QString> StatusSocketPlace::judge(const StatusSocketFacts &facts, uid_t self)
{
    if (!facts.directory)
        return QStringLiteral("the directory of %1 does not exist").arg(facts.path);
    const PathOwnership &dir = *facts.directory;
    if (!S_ISDIR(dir.mode))
        return QStringLiteral("the parent of %1 is not a directory").arg(facts.path);
    if (dir.uid != 0 && dir.uid != self)
        return QStringLiteral("the directory of %1 belongs to uid %2, neither root nor uid %3").arg(facts.path).arg(dir.uid).arg(self);
    const bool shared = writableByOthers(dir.mode);
    if (shared && (dir.mode & S_ISVTX) == 0)
        return QStringLiteral("the directory of %1 is writable by others (mode %2) without the sticky bit")
            .arg(facts.path, octal(dir.mode));
    if (facts.existing) {
        const uid_t owner = facts.existing->uid;
        const bool trusted = owner == self || owner == 0 || (!shared && owner == dir.uid);
        if (!trusted)
            return QStringLiteral("%1 already exists and belongs to uid %2").arg(facts.path).arg(owner);
    }
    return std::nullopt;
}

QList<uid_t> StatusSocketPlace::trustedServerUids(const StatusSocketFacts &facts, uid_t self)
{
    QList<uid_t> uids{0};
    if (self != 0)
        uids << self;
    if (facts.directory && !writableByOthers(facts.directory->mode) && !uids.contains(facts.directory->uid))
        uids << facts.directory->uid;
    return uids;
}

StatusSocketFacts StatusSocketPlace::inspect(const QString &path)
{
    StatusSocketFacts facts;
    facts.path = path;
    const QString dirPath = QFileInfo(path).absolutePath();
    struct stat st{};
    if (::stat(QFile::encodeName(dirPath).constData(), &st) == 0)
        facts.directory = PathOwnership{st.st_uid, st.st_mode};
    if (::lstat(QFile::encodeName(path).constData(), &st) == 0)
        facts.existing = PathOwnership{st.st_uid, st.st_mode};
    return facts;
}

} // namespace coreflow::status
