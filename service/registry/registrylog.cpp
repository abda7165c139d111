#include "registrylog.h"

#include <cstring>

Q_LOGGING_CATEGORY(lcRegistry, "coreflow.registry")

namespace coreflow {

namespace {

QLoggingCategory::CategoryFilter g_previousFilter = nullptr;
bool g_installed = false;

void quietQtRequestCategories(QLoggingCategory *category)
{
    if (g_previousFilter)
        g_previousFilter(category);
    if (isSilencedQtCategory(category->categoryName())) {
        category->setEnabled(QtDebugMsg, false);
        category->setEnabled(QtInfoMsg, false);
    }
}

bool hasPrefix(const char *name, const char *prefix)
{
    const std::size_t n = std::strlen(prefix);
    return std::strncmp(name, prefix, n) == 0 && (name[n] == '\0' || name[n] == '.');
}

} // namespace

bool isSilencedQtCategory(const char *categoryName)
{
    return categoryName && (hasPrefix(categoryName, "qt.httpserver") || hasPrefix(categoryName, "qt.network"));
}

void installQtRequestLoggingFilter()
{
    if (g_installed)
        return;
    g_installed = true;
    g_previousFilter = QLoggingCategory::installFilter(quietQtRequestCategories);
}

} // namespace coreflow
