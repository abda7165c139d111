#pragma once
// Logging category of the image pull endpoint: "coreflow.registry". One line per event; a line names
// the method, the path class (see RegistryPathClass) and the status or failure class, never a header
// value, a path's repository or a query (they can carry a node's token or its image names).
//
// Qt's own categories can print what ours never do: qt.httpserver's debug output prints each request
// with its headers (a node's Authorization), qt.network.* debug output prints upstream requests and
// replies. installQtRequestLoggingFilter() keeps debug (and info) output of qt.httpserver* and
// qt.network* off whatever QT_LOGGING_RULES, QT_LOGGING_CONF or setFilterRules() say; their warnings
// stay on. The daemon installs it first thing (service/main.cpp).
#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcRegistry)

namespace coreflow {
// Idempotent; chains to the filter installed before it (the rules filter by default).
void installQtRequestLoggingFilter();
// True for a category whose debug/info output the filter keeps off.
bool isSilencedQtCategory(const char *categoryName);
} // namespace coreflow
