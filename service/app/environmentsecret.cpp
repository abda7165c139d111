#include "service/app/environmentsecret.h"

#include <sodium.h>

#include <cstdlib>
#include <cstring>

namespace coreflow {

std::optional<Secret> EnvironmentSecret::take(const char *name)
{
    char *value = std::getenv(name);
    if (!value)
        return std::nullopt;
    const size_t length = std::strlen(value);
    Secret secret(QByteArrayView(value, qsizetype(length)));
    // "NAME=value" stays where it was (the initial environment block, or a leaked setenv() copy)
    // after unsetenv() drops the pointer to it: the whole entry is zeroed there.
    const size_t nameLength = std::strlen(name) + 1;
    char *entry = value - nameLength;
    ::unsetenv(name);
    sodium_memzero(entry, nameLength + length);
    return secret;
}

} // namespace coreflow
