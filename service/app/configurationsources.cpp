#include "service/app/configurationsources.h"

#include <QDir>
#include <QRegularExpression>
#include <QFile>
#include <QFileInfo>

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace coreflow {

namespace {

const QString kRefusal = QStringLiteral("configuration-invalid");
contract::Refusal invalid(const QString &reason) { return contract::Refusal{kRefusal, reason}; }

// The largest configuration source file read (a credential, a Docker secret, qenv.yml, an overlay):
// 1 MiB, far above any bearer or YAML the relay needs (contract §19.1).
constexpr qsizetype kMaxSourceFileBytes = 1024 * 1024;

QString errnoText(int error)
{
    if (error == EINVAL)
        return QStringLiteral("not a regular file");
    if (error == EFBIG)
        return QStringLiteral("larger than %1 bytes").arg(kMaxSourceFileBytes);
    return QStringLiteral("%1 (errno %2)").arg(QString::fromLocal8Bit(std::strerror(error))).arg(error);
}

// Reads a whole file with read(2): no stdio or QFile buffer keeps a copy. Returns 0, ENOENT/ENOTDIR
// when there is no such file, or the errno of the failure.
int readWholeFile(const QString &path, QByteArray &out)
{
    const QByteArray native = QFile::encodeName(path);
    // O_NONBLOCK: a FIFO put where a file belongs must not block the start (it is refused below).
    const int fd = ::open(native.constData(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int e = errno;
        ::close(fd);
        return e;
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        return EISDIR;
    }
    // Only a regular file of bounded size (contract §19.1): a device (/dev/zero), FIFO or socket in
    // its place would never end or block the start.
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return EINVAL;
    }
    if (st.st_size > kMaxSourceFileBytes) {
        ::close(fd);
        return EFBIG;
    }
    // One allocation sized to the file: no reallocation leaves a partial copy behind.
    out.resize(qsizetype(st.st_size) + 1);
    qsizetype used = 0;
    for (;;) {
        if (used == out.size())
            out.resize(out.size() * 2);
        const ssize_t n = ::read(fd, out.data() + used, size_t(out.size() - used));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const int e = errno;
            ::close(fd);
            Secret::wipe(out);
            return e;
        }
        if (n == 0)
            break;
        used += n;
        if (used > kMaxSourceFileBytes) { // grew while read
            ::close(fd);
            Secret::wipe(out);
            return EFBIG;
        }
    }
    ::close(fd);
    // Shrinking keeps the allocation (and wipe() later clears all of it).
    out.truncate(used);
    return 0;
}

// A YAML document read from `path`: nullopt with `error` set when it cannot be read or parsed.
std::optional<YAML::Node> loadYaml(const QString &path, QString &error)
{
    QByteArray bytes;
    if (const int e = readWholeFile(path, bytes); e != 0) {
        error = QStringLiteral("%1 cannot be read: %2").arg(path, errnoText(e));
        return std::nullopt;
    }
    try {
        YAML::Node node = YAML::Load(std::string(bytes.constData(), size_t(bytes.size())));
        Secret::wipe(bytes);
        return node;
    } catch (const YAML::Exception &e) {
        Secret::wipe(bytes);
        // The mark (line/column) only: the message could quote the document.
        error = QStringLiteral("%1 is not YAML (line %2, column %3)").arg(path).arg(e.mark.line + 1).arg(e.mark.column + 1);
        return std::nullopt;
    }
}

} // namespace

ConfigurationSources::Roots ConfigurationSources::rootsForExecutable(QProcessEnvironment environment, const QString &applicationDirectory,
                                                                     const QString &workingDirectory)
{
    Roots roots;
    roots.environment = std::move(environment);
    const QString qenv = QDir(applicationDirectory).filePath(QStringLiteral("qenv.yml"));
    if (QFileInfo::exists(qenv))
        roots.qenvFile = qenv;
    if (QFileInfo::exists(QDir(applicationDirectory).filePath(buildTreeMarkerName())))
        roots.overlayDirectory = QDir(workingDirectory).filePath(QStringLiteral(".nogit"));
    return roots;
}

contract::Result<ConfigurationSources> ConfigurationSources::open(Roots roots)
{
    ConfigurationSources sources;
    sources.m_roots = std::move(roots);
    sources.m_credentialsDirectory = sources.m_roots.environment.value(QStringLiteral("CREDENTIALS_DIRECTORY"));

    // A set $CREDENTIALS_DIRECTORY the relay cannot search is the unit's mistake: say so by path.
    if (sources.m_roots.environment.contains(QStringLiteral("CREDENTIALS_DIRECTORY"))) {
        const QByteArray native = QFile::encodeName(sources.m_credentialsDirectory);
        struct stat st {};
        if (sources.m_credentialsDirectory.isEmpty())
            return invalid(QStringLiteral("CREDENTIALS_DIRECTORY is set but empty"));
        if (::stat(native.constData(), &st) != 0)
            return invalid(QStringLiteral("CREDENTIALS_DIRECTORY %1 cannot be read: %2").arg(sources.m_credentialsDirectory, errnoText(errno)));
        if (!S_ISDIR(st.st_mode))
            return invalid(QStringLiteral("CREDENTIALS_DIRECTORY %1 cannot be read: %2").arg(sources.m_credentialsDirectory, errnoText(ENOTDIR)));
        // Searchable is enough: the relay opens files by name and never lists the directory (§19.1).
        if (::access(native.constData(), X_OK) != 0)
            return invalid(QStringLiteral("CREDENTIALS_DIRECTORY %1 cannot be read: %2").arg(sources.m_credentialsDirectory, errnoText(errno)));
    }

    if (!sources.m_roots.qenvFile.isEmpty()) {
        QString error;
        const auto doc = loadYaml(sources.m_roots.qenvFile, error);
        if (!doc)
            return invalid(QStringLiteral("qenv.yml: %1").arg(error));
        if (!doc->IsMap())
            return invalid(QStringLiteral("qenv.yml: %1 is not a map").arg(sources.m_roots.qenvFile));
        const YAML::Node required = (*doc)["required"];
        if (required && !required.IsNull()) {
            if (!required.IsSequence())
                return invalid(QStringLiteral("qenv.yml: required: in %1 is not a list of variable names").arg(sources.m_roots.qenvFile));
            for (const YAML::Node &entry : required) {
                static const QRegularExpression variableName(QStringLiteral("^[A-Z_][A-Z0-9_]*$"));
                if (!entry.IsScalar() || !variableName.match(QString::fromStdString(entry.Scalar())).hasMatch())
                    return invalid(QStringLiteral("qenv.yml: required: in %1 holds an entry that is not a variable name").arg(sources.m_roots.qenvFile));
                sources.m_qenvRequired << QString::fromStdString(entry.Scalar());
            }
        }
    }

    if (!sources.m_roots.overlayDirectory.isEmpty()) {
        const QDir dir(sources.m_roots.overlayDirectory);
        for (const char *name : {"env.yml", "env.yaml", "env.json"}) {
            const QString path = dir.filePath(QLatin1String(name));
            if (!QFileInfo::exists(path))
                continue;
            QString error;
            const auto doc = loadYaml(path, error); // JSON is YAML: one parser reads all three
            if (!doc)
                return invalid(QStringLiteral("overlay %1").arg(error));
            if (!doc->IsMap() && !doc->IsNull())
                return invalid(QStringLiteral("overlay %1 is not a map of variables").arg(path));
            if (doc->IsMap()) {
                for (const auto &entry : *doc) {
                    if (!entry.first.IsScalar() || !entry.second.IsScalar())
                        return invalid(QStringLiteral("overlay %1 holds an entry that is not NAME: value").arg(path));
                    const std::string &value = entry.second.Scalar();
                    sources.m_overlay.insert(QString::fromStdString(entry.first.Scalar()), QByteArray(value.data(), qsizetype(value.size())));
                }
            }
            sources.m_overlayFile = path;
            break;
        }
    }
    return sources;
}

contract::Result<std::optional<QString>> ConfigurationSources::findFile(const QString &name, QByteArray &out) const
{
    for (const QString &dir : {m_credentialsDirectory, m_roots.dockerSecretsDirectory}) {
        if (dir.isEmpty())
            continue;
        const QString path = dir + QLatin1Char('/') + name;
        const int e = readWholeFile(path, out);
        if (e == 0)
            return std::optional<QString>(path);
        if (e == ENOENT || e == ENOTDIR)
            continue;
        return invalid(QStringLiteral("%1: %2 cannot be read: %3").arg(name, path, errnoText(e)));
    }
    return std::optional<QString>();
}

contract::Result<bool> ConfigurationSources::checkEmptyEnvironment(const QString &name, bool setEmpty) const
{
    if (!setEmpty)
        return false;
    // An empty environment value would shadow a file source silently: refuse by name.
    QByteArray bytes;
    auto file = findFile(name, bytes);
    Secret::wipe(bytes);
    if (!file)
        return file.refusal();
    if (file.value())
        return invalid(QStringLiteral("%1 is set to the empty string in the environment, which would hide %2; unset it").arg(name, *file.value()));
    if (m_overlay.contains(name))
        return invalid(QStringLiteral("%1 is set to the empty string in the environment, which would hide %2; unset it").arg(name, m_overlayFile));
    return true;
}

contract::Result<std::optional<ConfigurationSources::Found>> ConfigurationSources::find(const QString &name) const
{
    if (m_roots.environment.contains(name)) {
        const QString value = m_roots.environment.value(name);
        auto empty = checkEmptyEnvironment(name, value.isEmpty());
        if (!empty)
            return empty.refusal();
        if (empty.value())
            return std::optional<Found>(); // set but empty, and nothing else holds it: unset
        return std::optional<Found>(Found{value.toUtf8(), QStringLiteral("the environment")});
    }
    QByteArray bytes;
    auto file = findFile(name, bytes);
    if (!file)
        return file.refusal();
    if (file.value())
        return std::optional<Found>(Found{bytes, *file.value()});
    if (const auto it = m_overlay.constFind(name); it != m_overlay.constEnd())
        return std::optional<Found>(Found{it.value(), m_overlayFile});
    return std::optional<Found>();
}

contract::Result<std::optional<ConfigurationSources::FoundSecret>> ConfigurationSources::findSecret(const QString &name,
                                                                                                    const std::optional<Secret> &provided) const
{
    std::optional<Secret> fromEnvironment = provided;
    if (!fromEnvironment && m_roots.environment.contains(name))
        fromEnvironment = Secret(m_roots.environment.value(name).toUtf8());
    if (fromEnvironment) {
        auto empty = checkEmptyEnvironment(name, fromEnvironment->isEmpty());
        if (!empty)
            return empty.refusal();
        if (empty.value())
            return std::optional<FoundSecret>();
        return std::optional<FoundSecret>(FoundSecret{*fromEnvironment, QStringLiteral("the environment"), false});
    }
    QByteArray bytes;
    auto file = findFile(name, bytes);
    if (!file)
        return file.refusal();
    if (file.value()) {
        FoundSecret found{Secret(bytes.isEmpty() ? QByteArrayView() : QByteArrayView(bytes)), *file.value(), true};
        Secret::wipe(bytes);
        return std::optional<FoundSecret>(std::move(found));
    }
    // The overlay is a development file: its value passes through yaml-cpp's strings (contract §19.4).
    if (const auto it = m_overlay.constFind(name); it != m_overlay.constEnd())
        return std::optional<FoundSecret>(FoundSecret{Secret(QByteArrayView(it.value())), m_overlayFile, true});
    return std::optional<FoundSecret>();
}

} // namespace coreflow
