#!/usr/bin/python3
"""Loopback Cloudly peer for tst_registrypull: Cloudly's public origin as the pull endpoint sees it.

One HTTPS origin (like Cloudly's) that
  * issues registry pull tokens at GET /token (the realm Debian's docker-registry is configured with),
    signed RS256 with a test key whose certificate is in the registry's rootcertbundle (JWT header x5c),
    granting every action each requested scope names (the relay makes no decision, neither does this);
  * forwards GET/HEAD /v2/... to the docker-registry behind it (plain HTTP on loopback), streaming.

Every request is logged as one line to --log (flushed at once) so the test can assert the relay
followed the rewritten realm:  token path=/token service=<s> scopes=<n> authorization=present|absent
                              v2 method=GET status=200
Stdlib only, plus the openssl CLI for signing. Prints "PORT <n>" on stdout once listening.

--plain serves plain HTTP instead of HTTPS (--cert/--key not needed): the backend behind a loopback
Cloudly's TLS front (tests/peers/loopbackhttpfront.h), which pipes /v2/ and the token path here.
"""
import argparse
import base64
import http.client
import http.server
import json
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
              "transfer-encoding", "upgrade", "host"}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Peer:
    def __init__(self, args):
        self.args = args
        self.log_lock = threading.Lock()
        self.log = open(args.log, "a", buffering=1)
        with open(args.token_cert, "rb") as f:
            pem = f.read().decode()
        der_b64 = "".join(l for l in pem.splitlines() if l and not l.startswith("-----"))
        self.x5c = [der_b64]

    def note(self, line):
        with self.log_lock:
            self.log.write(line + "\n")
            self.log.flush()

    def sign(self, scopes, service):
        now = int(time.time())
        access = []
        for scope in scopes:
            parts = scope.split(":")
            if len(parts) >= 3:
                access.append({"type": parts[0], "name": ":".join(parts[1:-1]),
                               "actions": [a for a in parts[-1].split(",") if a]})
        header = {"alg": "RS256", "typ": "JWT", "x5c": self.x5c}
        claims = {"iss": self.args.issuer, "sub": "coreflow-test-node", "aud": service, "exp": now + 600,
                  "nbf": now - 30, "iat": now, "jti": uuid.uuid4().hex, "access": access}
        signing_input = (b64url(json.dumps(header, separators=(",", ":")).encode()) + "." +
                         b64url(json.dumps(claims, separators=(",", ":")).encode()))
        sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", self.args.token_key],
                             input=signing_input.encode(), capture_output=True, check=True).stdout
        return signing_input + "." + b64url(sig)


def make_handler(peer):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # one exchange per connection, delimited by close

        def log_message(self, fmt, *a):  # quiet: the peer log is the record
            pass

        def do_HEAD(self):
            self.handle_any(head=True)

        def do_GET(self):
            self.handle_any(head=False)

        def handle_any(self, head):
            url = urllib.parse.urlsplit(self.path)
            if url.path == "/token":
                self.token(url, head)
            elif url.path == "/v2" or url.path.startswith("/v2/"):
                self.forward(head)
            else:
                self.send_error(404)

        def token(self, url, head):
            q = urllib.parse.parse_qs(url.query)
            service = q.get("service", [""])[0]
            scopes = []
            for s in q.get("scope", []):
                scopes.extend(s.split(" "))
            auth = "present" if self.headers.get("Authorization") else "absent"
            peer.note(f"token path={url.path} service={service} scopes={len(scopes)} authorization={auth}")
            token = peer.sign(scopes, service)
            body = json.dumps({"token": token, "access_token": token, "expires_in": 600,
                               "issued_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def forward(self, head):
            conn = http.client.HTTPConnection("127.0.0.1", peer.args.registry_port, timeout=60)
            conn.putrequest("HEAD" if head else "GET", self.path, skip_accept_encoding=True)
            for k, v in self.headers.items():  # repeated lines (several Accept) stay repeated
                if k.lower() not in HOP_BY_HOP:
                    conn.putheader(k, v)
            conn.endheaders()
            resp = conn.getresponse()
            peer.note(f"v2 method={'HEAD' if head else 'GET'} status={resp.status}")
            self.send_response_only(resp.status, resp.reason)
            for k, v in resp.getheaders():
                if k.lower() not in HOP_BY_HOP:
                    self.send_header(k, v)
            self.send_header("Connection", "close")
            self.end_headers()
            sent = 0
            try:
                if not head:
                    while True:
                        chunk = resp.read(64 * 1024)
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                        sent += len(chunk)
            except (OSError, ssl.SSLError):  # broken pipe, reset, TLS EOF: the client left
                peer.note(f"v2 client-gone after={sent}")
            finally:
                conn.close()

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--token-cert", required=True)
    ap.add_argument("--token-key", required=True)
    ap.add_argument("--issuer", required=True)
    ap.add_argument("--registry-port", type=int, required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    peer = Peer(args)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), make_handler(peer))
    server.daemon_threads = True
    if not args.plain:
        if not args.cert or not args.key:
            ap.error("--cert and --key are needed unless --plain")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
