#!/usr/bin/env python3
"""The layering check (docs/architecture.md "Layers"): every #include of a project header in the tree,
quoted or in angle brackets, is rooted at the repository, and no file includes a header of a layer above
its own.

Layers, bottom to top (a file may include its own layer and the layers below it):
  0 shared/                       the contract library
  1 service/core/                 logging categories, method table, counters, readiness board, dispatcher
  2 service/transport/            bytes on sockets in both roles (TCP, TLS, WebSocket, HTTP/1.1)
  3 service/cloudly/, service/listener/   the two hops (neither includes the other)
  4 lane folders under service/   each lane includes another lane only through ALLOWED_CROSS_LANE
  5 service/app/, service/main.cpp        the composition root
Outside service/: console/ includes shared/ and console/ only; tests/peers/ includes tests/peers/ only
(no service/ code, nothing of shared/: its names, refusals, offers, results and envelope codec are its
own, written from docs/contract.md);
the loopback Corestore peer is the only code that may include Qt HttpServer;
bench/harness/ includes nothing of the project; fuzz/ may use any product header, but the fuzz
targets' independent reference implementations (fuzz/reference*) include nothing of the project.

Usage: check_layers.py REPOSITORY_ROOT   (exit 0: clean; exit 1: every violation printed, one a line)
"""
import os
import re
import sys

HOPS = {'cloudly', 'listener'}
# Narrow interfaces through which one lane may use another (docs/architecture.md "Lanes").
ALLOWED_CROSS_LANE = {
    # The forwarding lane carries the escrow's offers to nodes: it implements the escrow's courier.
    ('forwarding', 'service/escrow/escrowcourier.h'),
    # Ingress connections are listener sessions of the clusterIngress kind, held by the forwarding lane:
    # the ingress asks them and hears their closes through ListenerSessions, and reads the connection.
    ('ingress', 'service/forwarding/listenersessions.h'),
    ('ingress', 'service/forwarding/nodeconnection.h'),
    # The closure streams name a streamed exchange's transport failures with the Corestore lane's words
    # (CorestoreHttpExchange::failureWord).
    ('closures', 'service/corestore/corestorehttpexchange.h'),
}
# The lanes on Corestore (bindings §12.2, backups §13.1-13.3, closures §13.4, isolated restore §14)
# call node Corestores through the Corestore lane's client; backups reach the closure streams only
# through their seam.
for _lane in ('bindings', 'backup', 'closures', 'isolatedrestore'):
    for _header in ('corestoreclient.h', 'corestorecalloutcome.h', 'corestoreendpoint.h'):
        ALLOWED_CROSS_LANE.add((_lane, 'service/corestore/' + _header))
ALLOWED_CROSS_LANE.add(('closures', 'service/corestore/corestorecredential.h'))
ALLOWED_CROSS_LANE.add(('backup', 'service/closures/closuretransfer.h'))
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# The same rules hold for a project header spelled with angle brackets: every target has the repository
# root on its include path, so `#include <shared/contract/envelope.h>` compiles anywhere (review of
# issue 16). An angle-bracket include whose first folder is one of the project's is judged like a
# quoted one; anything else in angle brackets (Qt, libsodium, the standard library) is a system header.
PROJECT_TOPS = ('shared', 'service', 'console', 'tests', 'bench', 'fuzz')
ANGLE_INCLUDE = re.compile(r'^\s*#\s*include\s*<((?:' + '|'.join(PROJECT_TOPS) + r')/[^>]+)>', re.M)
# Qt HttpServer (GPL-3 in Debian) may be included only by the loopback Corestore peer's files, which in
# turn include nothing of the project outside tests/peers/ (written from docs/contract.md §15 only).
HTTP_SERVER_INCLUDE = re.compile(r'^\s*#\s*include\s+<(QtHttpServer/[^>]*|QHttpServer[A-Za-z]*|QAbstractHttpServer)>', re.M)
CORESTORE_PEER = ('tests/peers/loopbackcorestore', 'tests/peers/corestoreexchange',
                  'tests/peers/closurebytegenerator', 'tests/peers/tst_loopbackcorestore')


def service_part(path):
    parts = path.split('/')
    if parts[0] != 'service':
        return None
    return parts[1] if len(parts) > 2 else 'main'


def rank(path):
    """(rank, lane or None) of a file under service/ or shared/; None for anything else."""
    if path.startswith('shared/'):
        return 0, None
    part = service_part(path)
    if part is None:
        return None
    if part == 'core':
        return 1, None
    if part == 'transport':
        return 2, None
    if part in HOPS:
        return 3, part
    if part in ('app', 'main'):
        return 5, None
    return 4, part


def violations(root):
    found = []
    for top in ('shared', 'service', 'console', 'tests', 'bench', 'fuzz'):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if not name.endswith(('.h', '.cpp')):
                    continue
                full = os.path.join(dirpath, name)
                path = os.path.relpath(full, root)
                if path.startswith('bench/baseline'):
                    continue
                with open(full, encoding='utf-8') as f:
                    text = f.read()
                if HTTP_SERVER_INCLUDE.search(text) and not path.startswith(CORESTORE_PEER):
                    found.append(f'{path}: includes Qt HttpServer: only the loopback Corestore peer may (GPL-3)')
                for inc in INCLUDE.findall(text):
                    if inc.endswith('.moc'):
                        continue
                    problem = judge(root, path, inc)
                    if problem:
                        found.append(f'{path}: #include "{inc}": {problem}')
                for inc in ANGLE_INCLUDE.findall(text):
                    problem = judge(root, path, inc)
                    if problem:
                        found.append(f'{path}: #include <{inc}>: {problem}')
    return found


def judge(root, path, inc):
    if not os.path.isfile(os.path.join(root, inc)):
        return 'not a path from the repository root (one include style: root-relative)'
    if path.startswith('console/'):
        if not inc.startswith(('shared/', 'console/')):
            return 'the console includes shared/ and console/ only'
        return None
    if path.startswith(CORESTORE_PEER) and not inc.startswith('tests/peers/'):
        return 'the loopback Corestore peer includes nothing of the project outside tests/peers/'
    if path.startswith('tests/peers/'):
        if inc.startswith('service/'):
            return 'a loopback peer shares no code with the relay'
        if inc.startswith('shared/contract/'):
            return ('a loopback peer speaks the contract from docs/contract.md with its own names, '
                    'refusals and codec (tests/peers/peer*.h), never the relay\'s shared/contract/')
        if not inc.startswith('tests/peers/'):
            return 'a loopback peer includes tests/peers/ only (docs/architecture.md "Layers")'
        return None
    if path.startswith('fuzz/reference'):
        if not inc.startswith('fuzz/reference'):
            return 'a reference implementation for a differential fuzz target shares no code with the relay'
        return None
    if path.startswith('bench/harness/'):
        if not inc.startswith('bench/harness/'):
            return 'the benchmark harness is independent of the project'
        return None
    own = rank(path)
    if own is None:
        return None  # tests, benchmarks and fuzz targets may use any product header
    other = rank(inc)
    if other is None:
        return 'product code includes something outside shared/ and service/'
    (own_rank, own_part), (inc_rank, inc_part) = own, other
    if inc_rank > own_rank:
        return f'layer {own_rank} includes layer {inc_rank} (arrows point down only)'
    if inc_rank == own_rank and own_part != inc_part:
        if own_rank == 3:
            return 'the two hops do not include each other'
        if own_rank == 4 and (own_part, inc) not in ALLOWED_CROSS_LANE:
            return f'lane {own_part} uses lane {inc_part} outside the allowed narrow interfaces'
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    found = violations(root)
    for line in found:
        print(line)
    print(f'layering: {len(found)} violation(s)')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
