#include "tests/support/loggedrelaytest.h"

namespace coreflow::testing {

void LoggedRelayTest::init()
{
    log.install();
    log.clear();
}

} // namespace coreflow::testing
