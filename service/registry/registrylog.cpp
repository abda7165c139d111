#include "registrylog.h"

Q_LOGGING_CATEGORY(lcRegistry, "coreflow.registry")
