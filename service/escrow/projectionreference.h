#pragma once
// ProjectionReference: names one signed runtime network projection (docs/contract.md §4,
// §9). Value-free: an id, a generation and a digest.
// Wire: { id: string (non-empty, <= 256 chars), generation: integer >= 0, digest: string (64 lowercase hex) }
// read() is an exact-key reader; a problem is refused under refusalName (request-invalid by default,
// escrow-run-invalid when it reads a hold) naming the field, never the value found.
#include "shared/contract/result.h"

#include <QJsonObject>
#include <QString>

namespace coreflow {

struct ProjectionReference {
    QString id;
    qint64 generation = 0;
    QString digest;

    static contract::Result<ProjectionReference> read(const QJsonObject &object, const QString &path,
                                                      const QString &refusalName = {});
    QJsonObject toJson() const;
    // "<id>/<generation>" for log lines and refusal reasons.
    QString describe() const { return QStringLiteral("%1/%2").arg(id).arg(generation); }
    bool operator==(const ProjectionReference &) const = default;
};

} // namespace coreflow
