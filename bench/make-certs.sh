#!/usr/bin/env bash
# bench/make-certs.sh DIR — a throw-away test CA (EC P-256) and two leaves for localhost/127.0.0.1:
#   ca.pem; server.pem/server.key (the bench Cloudly, chain leaf+CA); relay-chain.pem/relay.key (handed to
#   the relay through getClusterRelayCertificate: leaf first, then the CA).
set -euo pipefail
D="${1:?usage: make-certs.sh DIR}"
mkdir -p "$D"
cd "$D"
openssl ecparam -name prime256v1 -genkey -noout -out ca.ec 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in ca.ec -out ca.key
openssl req -x509 -new -key ca.key -sha256 -days 30 -subj "/CN=Coreflow Bench CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out ca.pem 2>/dev/null
for name in server relay; do
  openssl ecparam -name prime256v1 -genkey -noout -out "$name.ec" 2>/dev/null
  openssl pkcs8 -topk8 -nocrypt -in "$name.ec" -out "$name.key"
  openssl req -new -key "$name.key" -subj "/CN=localhost" -out "$name.csr" 2>/dev/null
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 7 -sha256 \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  cat "$name.crt" ca.pem >"$name-chain.pem"
  rm -f "$name.ec" "$name.csr" "$name.ext"
done
cp server-chain.pem server.pem
