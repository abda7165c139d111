#pragma once
// NormalizedPath: the path rule of docs/contract.md §19.2 (D-27) for the command-line options that
// name files (--ca-file, --status-socket): absolute, no empty, `.` or `..` segment, no trailing `/`.
// A path that breaks it ends the start with exit 1 naming the option.
#include <QString>

namespace coreflow {

class NormalizedPath {
public:
    static bool isAbsoluteNormalized(const QString &path);
};

} // namespace coreflow
