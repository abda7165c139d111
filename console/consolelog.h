#pragma once
// The console's logging category: coreflow.console (one line per event).
#include <QLoggingCategory>

namespace coreflow::console {
Q_DECLARE_LOGGING_CATEGORY(lcConsole)
}
