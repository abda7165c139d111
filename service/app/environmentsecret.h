#pragma once
// EnvironmentSecret: takes one secret variable out of the process environment before anything copies
// it (docs/contract.md §19.4). The value is copied into a Secret (guarded memory), the variable is
// unset and its whole "NAME=value" entry is overwritten with zeros where it lies (so
// /proc/<pid>/environ and a memory image hold neither). main() calls it before QProcessEnvironment reads the
// environment; nothing else may read that variable afterwards.
#include "shared/secret.h"

#include <optional>

namespace coreflow {

class EnvironmentSecret {
public:
    // nullopt when the variable is not set; an empty Secret when it is set but empty.
    static std::optional<Secret> take(const char *name);
};

} // namespace coreflow
