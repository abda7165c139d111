#pragma once
// Logging category of the image pull endpoint: "coreflow.registry". One line per event; a line names
// the method, the path class (see RegistryPathClass) and the status or failure class, never a header
// value, a path's repository or a query (they can carry a node's token or its image names).
#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcRegistry)
