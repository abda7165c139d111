#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora under fuzz/corpus/<target>/ (small, real frames and bodies of
the contract's shapes, as the tests send them). Run from anywhere: python3 fuzz/makeseeds.py
Each file is named by what it holds; rerunning rewrites the same bytes."""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
KEY = bytes([0x12, 0x34, 0xAB, 0xCD])


def frame(opcode, payload, masked, fin=True, length_form=None):
    first = (0x80 if fin else 0) | opcode
    n = len(payload)
    form = length_form or ('short' if n < 126 else 'medium' if n <= 0xFFFF else 'long')
    mask_bit = 0x80 if masked else 0
    if form == 'short':
        head = bytes([first, mask_bit | n])
    elif form == 'medium':
        head = bytes([first, mask_bit | 126]) + struct.pack('>H', n)
    else:
        head = bytes([first, mask_bit | 127]) + struct.pack('>Q', n)
    if masked:
        body = bytes(b ^ KEY[i % 4] for i, b in enumerate(payload))
        return head + KEY + body
    return head + payload


def websocket_streams(masked):
    envelope = json.dumps({"method": "getClusterConfig", "correlation": {"id": "c-1", "phase": "request"},
                           "request": {}}).encode()
    return {
        'text': frame(1, envelope, masked),
        'binary': frame(2, bytes(range(40)), masked),
        'medium': frame(1, b'x' * 300, masked),
        'longform': frame(1, b'hello', masked, length_form='long'),
        'fragmented': frame(1, 'grüß '.encode(), masked, fin=False) + frame(9, b'ping', masked)
        + frame(0, ' dich'.encode(), masked),
        'pingpong': frame(9, b'', masked) + frame(10, b'abc', masked),
        'close': frame(8, struct.pack('>H', 1000) + b'bye', masked),
        'closebadutf8': frame(8, struct.pack('>H', 1001) + b'\xc3\x28', masked),
        'badutf8': frame(1, b'\xed\xa0\x80', masked),
        'partial': frame(1, b'abcdefgh', masked)[:7],
        'wrongmask': frame(1, b'abc', not masked),
        'rsv': bytes([0xC1]) + frame(1, b'a', masked)[1:],
    }


def write(target, name, data):
    d = os.path.join(HERE, 'corpus', target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


def main():
    for target, masked, role_bit in (('fuzz_websocket_server', True, 1), ('fuzz_websocket_client', False, 0)):
        for name, stream in websocket_streams(masked).items():
            write(target, name, bytes([2, 0]) + stream)       # 4096-byte bound, fed at once
            write(target, name + '-drip', bytes([2, 3]) + stream)  # fed in 3-byte pieces
            write('fuzz_websocket_differential', f'{target[15:]}-{name}', bytes([role_bit | (5 << 1), 7]) + stream)
    for name, payload in (('empty', b''), ('one', b'\x03'), ('normal', b'\x03\xe8bye'), ('reserved', b'\x03\xed'),
                          ('private', b'\x0f\xa0ok'), ('badutf8', b'\x03\xe8\xff')):
        write('fuzz_websocket_close', name, payload)

    binding = {"nodeId": "node-1", "clusterId": "cluster-1", "sessionId": "s-1", "relayRegistrationGeneration": 3}
    projection = {"id": "proj-1", "generation": 2, "digest": "0123456789abcdef" * 4}
    envelopes = {
        'request': {"method": "pushClusterRouteTable", "correlation": {"id": "c-1", "phase": "request"},
                    "request": {"session": binding, "x": [1, 2.5, None, True]}},
        'response': {"method": "getClusterConfig", "correlation": {"id": "c-2", "phase": "response"},
                     "request": {}, "response": {"cluster": {"id": "c", "name": "n", "relay": None, "nodes": []}}},
        'error': {"method": "m", "correlation": {"id": "c-3", "phase": "response"}, "request": {},
                  "error": {"text": "request-invalid: field x", "data": {"name": "request-invalid"}},
                  "retry": {"waitMs": 500}},
        'authinfo': {"method": "m", "correlation": {"id": "c-4", "phase": "request"}, "authInfo": {"jwt": "x"},
                     "localData": {}, "serverData": {}},
    }
    for name, body in envelopes.items():
        write('fuzz_envelope', name, json.dumps(body).encode())

    types = [
        (0, binding),
        (1, {"token": "secret-token-value-0123456789", "clusterId": "cluster-1", "expiresAt": 1764547200000}),
        (2, {"origin": "https://relay.example:8443"}),
        (3, {"id": "node-1", "corestore": {"endpoint": "https://10.0.0.2:7443"},
             "corestoreDatabase": {"host": "10.0.0.2", "port": 27017}}),
        (4, {"id": "cluster-1", "name": "prod", "relay": {"origin": "https://relay.example"},
             "nodes": [{"id": "n", "corestore": None, "corestoreDatabase": None}]}),
        (5, {"domain": "relay.example", "certificatePem": "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n",
             "privateKeyPem": "-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\n"}),
        (6, projection),
    ]
    for selector, body in types:
        write('fuzz_contract_types', f'reader{selector}', bytes([selector]) + json.dumps(body).encode())

    write('fuzz_offers', 'pallet', json.dumps({"sessionKind": "palletRuntime", "release": "33.1.0"}).encode())
    write('fuzz_offers', 'ingress', json.dumps({"offer": {"sessionKind": "clusterIngress", "release": "32.0.0"}}).encode())
    write('fuzz_offers', 'release', b'32.10.1')

    renewals = [{"nodeId": "node-1", "sessionId": "s-1", "projection": projection, "sequence": i,
                 "notBefore": 1764547200000 + i * 600000, "expiresAt": 1764547200000 + i * 600000 + 900000,
                 "signature": "c2ln"} for i in range(3)]
    write('fuzz_escrow_run', 'run', json.dumps({"session": binding, "projection": projection, "renewals": renewals}).encode())
    write('fuzz_escrow_run', 'empty', json.dumps({"session": binding, "projection": projection, "renewals": []}).encode())

    table = {"clusterId": "cluster-1", "revision": 7, "computedAt": 1764547200000,
             "routes": [{"hostname": "app.example", "certificateId": "cert-1",
                         "targets": [{"nodeId": "node-1", "address": "10.0.0.5", "port": 8080}]}],
             "certificates": [{"id": "cert-1", "hostnames": ["app.example", "www.app.example"],
                               "certificatePem": "-----BEGIN CERTIFICATE-----\n",
                               "privateKeyPem": "-----BEGIN PRIVATE KEY-----\nsecret-material-0123\n"}]}
    write('fuzz_route_table', 'table', json.dumps(table).encode())
    write('fuzz_route_table', 'carrier', json.dumps({"routeTable": table}).encode())
    write('fuzz_route_table', 'carriernull', json.dumps({"routeTable": None}).encode())

    import base64
    def vpn_key(fill):
        return base64.b64encode(bytes([fill]) * 32).decode()
    vpn = {"authority": {"id": "cloudly-authority-1", "publicKey": vpn_key(0x41)}, "revision": 3,
           "controlPrefix": "100.96.0.0/16", "expiresAt": 1764547200000,
           "members": [{"nodeId": "node-%d" % i, "publicKey": vpn_key(0x61 + i), "address": "100.96.0.%d" % (2 + i),
                        "expiresAt": 1764547200000 - i} for i in range(3)],
           "grants": [{"from": "node-0", "to": "node-1"}, {"from": "node-1", "to": "node-0"}]}
    write('fuzz_vpn_network', 'network', json.dumps(vpn).encode())
    write('fuzz_vpn_network', 'carrier', json.dumps({"network": vpn}).encode())
    write('fuzz_vpn_network', 'carriernull', json.dumps({"network": None}).encode())

    write('fuzz_ingress_registration', 'registration', json.dumps(
        {"offer": {"sessionKind": "clusterIngress", "release": "33.1.0"}, "ingressId": "ingress-1",
         "nodeId": "node-1", "authorization": "Bearer secret-bearer-0123456789"}).encode())

    write('fuzz_registration_acceptance', 'acceptance', json.dumps(
        {"offer": {"sessionKind": "cloudlyClient", "release": "33.1.0"}, "origin": "https://relay.example:8443",
         "credential": {"id": "cred-1", "generation": 2}, "registration": {"id": "reg-1", "generation": 5}}).encode())

    write('fuzz_www_authenticate', 'bearer', b'Bearer realm="https://cloudly.example/v2/token",service="cloudly.example",scope="repository:a/b:pull"')
    write('fuzz_www_authenticate', 'several', b'Basic realm="registry", Bearer realm="https://CLOUDLY.example:443/token?x=1"\nBearer realm="https://auth.docker.io/token",service="registry.docker.io"')
    write('fuzz_www_authenticate', 'escaped', b'Bearer realm="https://cloudly.example/\\"x",error="invalid_token"')

    write('fuzz_registry_headers', 'request', b'Authorization: Bearer abc\nAccept: application/vnd.oci.image.manifest.v1+json\nAccept: */*\nUser-Agent: docker/24\nCookie: a=b\nHost: relay')
    write('fuzz_registry_headers', 'response', b'Content-Type: application/json\nContent-Length: 12\nWWW-Authenticate: Bearer realm="https://cloudly.example/t"\nSet-Cookie: x\nDocker-Content-Digest: sha256:00')
    write('fuzz_registry_headers', 'encoded', b'Content-Encoding: gzip\nContent-Length: 40\nETag: "x"')

    answers = {
        'length': b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello',
        'chunked': b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n',
        'interim': b'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n',
        'close': b'HTTP/1.0 200 OK\r\n\r\nuntil the end',
        'challenge': b'HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm="https://cloudly.example/v2/token"\r\nContent-Length: 0\r\n\r\n',
    }
    for name, answer in answers.items():
        write('fuzz_http_response', name, bytes([0]) + answer)
        write('fuzz_http_response', name + '-drip', bytes([2 << 1]) + answer)
    write('fuzz_http_response', 'head', bytes([1]) + b'HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n')

    requests = {
        'manifest': b'GET /v2/library/alpine/manifests/latest HTTP/1.1\r\nHost: relay\r\nAccept: application/json\r\nAuthorization: Bearer x\r\n\r\n',
        'pipelined': b'HEAD /v2/ HTTP/1.1\r\nHost: r\r\n\r\nGET /v2/a/blobs/sha256:00?x=1 HTTP/1.1\r\nRange: bytes=0-\r\n\r\n',
        'dots': b'GET /v2/%2e%2E/admin HTTP/1.1\r\n\r\nGET /v2/a%2Fb HTTP/1.1\r\n\r\n',
        'upgrade': b'GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n',
        'body': b'POST /v2/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
        'token': b'GET /token?service=s HTTP/1.0\r\n\r\n',
    }
    for name, request in requests.items():
        write('fuzz_http_request', name, bytes([0]) + request)
        write('fuzz_http_request', name + '-drip', bytes([5]) + request)

    write('fuzz_status_lines', 'hello', b'{"type":"hello","version":1,"subscribe":true}\n{"type":"hello","version":1}\n')
    write('fuzz_status_lines', 'server', b'{"type":"refusal","name":"status-access-denied","reason":"uid 1000"}\n'
          b'{"type":"event","version":1,"atMs":1764547200000,"kind":"node","line":"node-1 registered"}\n'
          b'{"type":"snapshot","version":1,"status":{"build":"0.1.0","ready":true,"nodes":[{"nodeId":"n"}]}}\n')


if __name__ == '__main__':
    main()
