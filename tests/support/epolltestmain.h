#pragma once
// COREFLOW_EPOLL_TEST_MAIN(TestObject): QTEST_GUILESS_MAIN, but with the relay's production event
// dispatcher (service/core/epolleventdispatcher.h) installed before the application is constructed,
// exactly as service/main.cpp does; COREFLOW_EVENT_DISPATCHER=qt keeps Qt's default there and here.
// The integration tests use it, so the in-process suite runs on the dispatcher production runs on.
#include "service/core/epolleventdispatcher.h"

#include <QCoreApplication>
#include <QTest>

namespace coreflow::testing {

inline void installEpollEventDispatcher()
{
    if (qgetenv("COREFLOW_EVENT_DISPATCHER") == "qt")
        return;
    auto *dispatcher = new EpollEventDispatcher;
    if (dispatcher->isValid())
        QCoreApplication::setEventDispatcher(dispatcher);
    else
        delete dispatcher;
}

} // namespace coreflow::testing

#define COREFLOW_EPOLL_TEST_MAIN(TestObject)                                                                 \
    QTEST_MAIN_WRAPPER(TestObject, coreflow::testing::installEpollEventDispatcher();                         \
                       QTEST_QAPP_SETUP(QCoreApplication))
