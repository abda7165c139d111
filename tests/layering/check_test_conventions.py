#!/usr/bin/env python3
"""The test conventions a reading of tests/ cannot keep by itself (issue 16):

  - every in-process integration test (tests/integration/tst_*.cpp) and every test of the pull endpoint
    and the relay's listener (tests/registry/tst_*.cpp, which drive the real RelayListener), and every
    status socket test (tests/status/*.cpp that includes <QTest>: they drive the relay's StatusServer in
    process; the probe client there is a plain program) ends with COREFLOW_EPOLL_TEST_MAIN, so the suite runs on the event dispatcher production installs
    (tests/support/epolltestmain.h), never on Qt's default one (QTEST_MAIN, QTEST_GUILESS_MAIN...);
  - no test leaves through a bare QSKIP: the one way out is COREFLOW_SKIP_OR_FAIL
    (tests/support/skiporfail.h), which fails instead under COREFLOW_REQUIRE_ALL=1 (CI), and returns
    from the test function itself (a QSKIP in a helper only leaves the helper in Qt 6.4).

Usage: check_test_conventions.py REPOSITORY_ROOT   (exit 0: clean; exit 1: every violation printed)
"""
import os
import re
import sys

# The test folders whose tests run on the production dispatcher. The console tests (tests/console/) are
# not here: they are QTEST_MAIN GUI tests (a QApplication needs the platform's GUI dispatcher), see
# tests/PROOFS.md "Dispatcher".
ON_PRODUCTION_DISPATCHER = ('tests/integration/tst_', 'tests/registry/tst_')
# Test files here are not named tst_*: a file is a test when it includes QtTest.
STATUS_TESTS = 'tests/status/'
QTEST_INCLUDE = re.compile(r'^\s*#\s*include\s*<(QTest|QtTest|QtTest/QTest|QtTest/QtTest)>', re.M)
SKIP_HOME = 'tests/support/skiporfail.h'
BARE_SKIP = re.compile(r'\bQSKIP\s*\(')
QT_MAIN = re.compile(r'^\s*(QTEST_MAIN|QTEST_GUILESS_MAIN|QTEST_APPLESS_MAIN|QTEST_WIDGETLESS_MAIN)\s*\(', re.M)
EPOLL_MAIN = re.compile(r'^\s*COREFLOW_EPOLL_TEST_MAIN\s*\(', re.M)


def violations(root):
    found = []
    tests = os.path.join(root, 'tests')
    for dirpath, _, names in os.walk(tests):
        for name in sorted(names):
            if not name.endswith(('.h', '.cpp')):
                continue
            full = os.path.join(dirpath, name)
            path = os.path.relpath(full, root)
            with open(full, encoding='utf-8') as f:
                text = f.read()
            if path != SKIP_HOME and BARE_SKIP.search(text):
                found.append(f'{path}: a bare QSKIP: skip through COREFLOW_SKIP_OR_FAIL ({SKIP_HOME})')
            on_production = path.startswith(ON_PRODUCTION_DISPATCHER) or (
                path.startswith(STATUS_TESTS) and QTEST_INCLUDE.search(text) is not None)
            if on_production and path.endswith('.cpp'):
                if QT_MAIN.search(text) or not EPOLL_MAIN.search(text):
                    found.append(f'{path}: an integration, registry or status test runs on the production dispatcher: '
                                 'end it with COREFLOW_EPOLL_TEST_MAIN (tests/support/epolltestmain.h)')
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    found = violations(root)
    for line in found:
        print(line)
    print(f'test conventions: {len(found)} violation(s)')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
