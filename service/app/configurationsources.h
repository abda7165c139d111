#pragma once
// ConfigurationSources: where one relay process finds the value of a variable (docs/contract.md §19.1,
// D-21, D-32). One lookup serves every variable; the sources, highest precedence first:
//
//   1. the process environment;
//   2. $CREDENTIALS_DIRECTORY/<NAME> (systemd credentials), read byte for byte;
//   3. <dockerSecretsDirectory>/<NAME> (/run/secrets, Docker secrets), read byte for byte;
//   4. only when the executable runs from a build tree (the file `coreflow-build-tree` lies beside it,
//      contract §19.1): the first of .nogit/env.yml, .nogit/env.yaml, .nogit/env.json in the working
//      directory (never a .env), a flat map of scalar values.
//
// Besides, `qenv.yml` beside the executable lists under `required:` the variables a start refuses to
// go without (every missing one named at once by ConfigurationReader).
//
// Refusals (all `configuration-invalid`, naming a path or a variable and an errno, never a value):
// an unreadable $CREDENTIALS_DIRECTORY; a credential or secret file that exists but cannot be read; a
// variable set to the empty string in the environment while a file source holds it; a qenv.yml or
// overlay that is not readable YAML of the expected shape.
#include "shared/contract/result.h"
#include "shared/secret.h"

#include <QHash>
#include <QProcessEnvironment>
#include <QStringList>
#include <optional>

namespace coreflow {

class ConfigurationSources {
public:
    // The roots one process reads; tests inject every one of them.
    struct Roots {
        QProcessEnvironment environment;
        QString dockerSecretsDirectory = QStringLiteral("/run/secrets");
        QString qenvFile;         // qenv.yml beside the executable; empty: none
        QString overlayDirectory; // the working directory's .nogit; empty: not a build tree, no overlay
    };

    // The file a build tree holds beside the executable (CMake writes it; a release never holds it).
    static QString buildTreeMarkerName() { return QStringLiteral("coreflow-build-tree"); }
    // The roots of the executable in `applicationDirectory` started in `workingDirectory`: qenv.yml
    // beside the executable when it is there, the .nogit overlay only from a build tree.
    static Roots rootsForExecutable(QProcessEnvironment environment, const QString &applicationDirectory,
                                    const QString &workingDirectory);

    // Reads qenv.yml and the overlay and checks $CREDENTIALS_DIRECTORY; refused as described above.
    static contract::Result<ConfigurationSources> open(Roots roots);

    // One value and where it came from ("the environment", a file path, or the overlay path).
    struct Found {
        QByteArray bytes;
        QString where;
    };
    struct FoundSecret {
        Secret value;
        QString where;
        bool fromFile = false;
    };
    // nullopt: no source holds the variable. A source that holds it but cannot be read is a refusal.
    contract::Result<std::optional<Found>> find(const QString &name) const;
    // The same lookup for a secret: a file is read unbuffered straight into guarded memory and its one
    // read buffer wiped (contract §19.4). `provided` is a value main() took out of the environment
    // before anything copied it (EnvironmentSecret); it ranks as the environment does.
    contract::Result<std::optional<FoundSecret>> findSecret(const QString &name, const std::optional<Secret> &provided) const;

    // The names qenv.yml lists under required: (empty without a qenv.yml).
    const QStringList &qenvRequired() const { return m_qenvRequired; }
    const QString &overlayFile() const { return m_overlayFile; }

private:
    // A value in a file source: bytes into `out` (nullopt when no file source holds it).
    contract::Result<std::optional<QString>> findFile(const QString &name, QByteArray &out) const;
    contract::Result<bool> checkEmptyEnvironment(const QString &name, bool setEmpty) const;

    Roots m_roots;
    QString m_credentialsDirectory;
    QStringList m_qenvRequired;
    QString m_overlayFile;
    QHash<QString, QByteArray> m_overlay;
};

} // namespace coreflow
