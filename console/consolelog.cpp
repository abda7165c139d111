#include "console/consolelog.h"

namespace coreflow::console {
Q_LOGGING_CATEGORY(lcConsole, "coreflow.console")
}
