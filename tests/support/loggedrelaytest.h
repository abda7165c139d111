#pragma once
// LoggedRelayTest: the base of an integration test class whose checks read the relay's log lines.
// Before every test function the capture is installed and emptied, so `log` holds that test's lines only.
#include "tests/integration/logcapture.h"

#include <QObject>

namespace coreflow::testing {

class LoggedRelayTest : public QObject {
    Q_OBJECT
protected:
    LogCapture log;

private Q_SLOTS:
    void init();
};

} // namespace coreflow::testing
