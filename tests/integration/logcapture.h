#pragma once
// LogCapture: collects every formatted log line the process writes while it is installed (and still
// passes them to the previous handler), so tests can assert what was — and was never — logged.
#include <QStringList>
#include <QtGlobal>

namespace coreflow::testing {

class LogCapture {
public:
    LogCapture() = default;
    ~LogCapture();
    // Installs the capturing handler over the current one. QTest installs its own handler when the run
    // starts, so call this from initTestCase()/init(), not from a constructor. Idempotent.
    void install();
    QStringList lines() const;
    bool contains(const QString &needle) const;
    int count(const QString &needle) const;
    void clear();

private:
    bool m_installed = false;
};

} // namespace coreflow::testing
