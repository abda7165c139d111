#pragma once
// COREFLOW_SKIP_OR_FAIL(reason): the one way a test of this suite leaves early because the host lacks
// something (root, setpriv, docker-registry, skopeo). `reason` is a QString; empty means "can run".
//
// Normally the test is skipped with the reason (CTest shows such a run as "Skipped", through the
// SKIP_REGULAR_EXPRESSION that coreflow_mark_skips() in tests/CMakeLists.txt sets). With the
// environment variable COREFLOW_REQUIRE_ALL=1 (./run test sets it when CI=true) the test FAILS
// instead: on CI every test must run.
//
// A macro, not a function: QSKIP/QFAIL return from the test function itself (in Qt 6.4 a QSKIP inside
// a helper only returns from the helper, and the test goes on).
#include <QString>
#include <QTest>
#include <QtGlobal>

namespace coreflow::testing {

inline bool everyTestRequired() { return qEnvironmentVariable("COREFLOW_REQUIRE_ALL") == QLatin1StringView("1"); }

} // namespace coreflow::testing

#define COREFLOW_SKIP_OR_FAIL(reason)                                                                        \
    do {                                                                                                     \
        const QString coreflowSkipReason_ = (reason);                                                        \
        if (!coreflowSkipReason_.isEmpty()) {                                                                \
            if (coreflow::testing::everyTestRequired())                                                      \
                QFAIL(qPrintable(QStringLiteral("COREFLOW_REQUIRE_ALL=1 but this test cannot run here: ")    \
                                 + coreflowSkipReason_));                                                    \
            QSKIP(qPrintable(coreflowSkipReason_));                                                          \
        }                                                                                                    \
    } while (false)
