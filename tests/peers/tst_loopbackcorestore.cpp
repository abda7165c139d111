#include "tests/peers/loopbackcorestore.h"
#include <QTest>
class TestLoopbackCorestore : public QObject { Q_OBJECT };
QTEST_GUILESS_MAIN(TestLoopbackCorestore)
#include "tst_loopbackcorestore.moc"
