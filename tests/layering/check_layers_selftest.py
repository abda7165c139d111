#!/usr/bin/env python3
"""layering_selftest: check_layers.py must go red when a loopback peer includes the product again.

Builds a scratch tree with one peer file and the headers it names, runs the checker on it and asserts
the verdict for each include (docs/architecture.md "Layers", the tests/peers/ rule)."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [
    # (include written by a peer, must be refused)
    ('shared/contract/methods.h', True),
    ('shared/contract/refusalnames.h', True),
    ('shared/contract/types.h', True),
    ('shared/contract/envelope.h', True),
    ('shared/util/clock.h', True),
    ('service/core/logging.h', True),
    ('tests/peers/peerrefusal.h', False),
    # Review of issue 16: the same headers spelled with angle brackets. The peers' CMake target puts the
    # repository root on the include path (target_include_directories PUBLIC ${CMAKE_SOURCE_DIR}), so
    # `#include <shared/contract/envelope.h>` compiles in a peer and, in an integration test that also
    # links coreflow_service, links: the peer would speak the product's codec again.
    ('<shared/contract/envelope.h>', True),
    ('<shared/contract/refusalnames.h>', True),
    ('<service/core/logging.h>', True),
]


def verdict(spelled):
    angled = spelled.startswith('<')
    include = spelled.strip('<>')
    with tempfile.TemporaryDirectory() as root:
        for path in (include, 'tests/peers/somepeer.cpp'):
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, include), 'w') as f:
            f.write('#pragma once\n')
        with open(os.path.join(root, 'tests/peers/somepeer.cpp'), 'w') as f:
            f.write(f'#include <{include}>\n' if angled else f'#include "{include}"\n')
        run = subprocess.run([sys.executable, os.path.join(HERE, 'check_layers.py'), root],
                             capture_output=True, text=True)
        return run.returncode, run.stdout


def main():
    failed = 0
    for include, refused in CASES:
        code, out = verdict(include)
        if (code != 0) != refused:
            failed += 1
            print(f'FAIL: a peer including {include}: expected {"refused" if refused else "clean"}, got:\n{out}')
        else:
            print(f'ok: a peer including {include}: {"refused" if refused else "clean"}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
