#!/usr/bin/env bash
# bench/registry/run.sh BUILD_DIR — image pull endpoint benchmark (issue "Image pulls through the relay").
#
# One run, three paths to the same Debian docker-registry (TLS on loopback, no auth, blobs placed in its
# filesystem storage directly):
#   direct       client -> registry
#   nginx        client -> nginx (TLS, same certificate) -> registry; proxy_buffering off, 256k buffers
#   nginx-dflt   the same nginx with its default proxy buffering
#   relay        client -> registry_bench_relay (RegistryProxy behind a TLS listener) -> registry
# Workloads: one 1 GiB blob; 200 concurrent GETs of a 4 MiB blob; header latency (median time from the
# TLS session being up to the first response byte, 20 sequential GETs of the 4 MiB blob); a slow client
# (2 MB/s for 5 s on the 1 GiB blob, relay only: the relay's peak RSS growth meanwhile).
# Reported: throughput (MB/s = 10^6 B/s), peak RSS growth of the proxy process during the workload
# (VmHWM after reset via /proc/PID/clear_refs, minus VmRSS before), header latency.
# Needs (Debian): docker-registry nginx-light (or nginx) curl openssl; root for clear_refs of nginx.
# Environment (for profiling runs):
#   BENCH_PATHS="relay"        only these paths (default: direct nginx nginx-dflt relay)
#   BENCH_CASES="conc"         only these workloads of: lat big conc (default: all three)
#   BENCH_ROUNDS=3             rounds; the paths alternate within each round and the summary compares
#                              medians over the rounds (this shared machine drifts by +-10-20 %)
#   BENCH_PERF=FILE            record `perf record -g` of the serving process during the 200x4MiB
#                              workload into FILE.<path> (needs perf; Debian package linux-perf)
set -euo pipefail
BUILD="$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)"
RELAY_BIN="$BUILD/tests/registry/registry_bench_relay"
for tool in docker-registry nginx curl openssl; do
  command -v "$tool" >/dev/null 2>&1 || { echo "bench/registry: $tool not installed; skipped"; exit 0; }
done
[ -x "$RELAY_BIN" ] || { echo "bench/registry: $RELAY_BIN missing (build the registry_bench_relay target)"; exit 1; }

W="$(mktemp -d /tmp/coreflow-registry-bench.XXXXXX)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  [ -f "$W/nginx.pid" ] && kill "$(cat "$W/nginx.pid")" 2>/dev/null || true
  sleep 0.3
  rm -rf "$W"
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
kib() { awk -v k="$2" '$1==k":"{print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
reset_peak() { echo 5 > "/proc/$1/clear_refs" 2>/dev/null || true; }

# --- PKI: one CA, one certificate for registry, nginx and relay ------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/ca.key" -out "$W/ca.crt" -days 1 \
  -subj "/CN=coreflow bench CA" -addext "basicConstraints=critical,CA:TRUE" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$W/srv.key" -out "$W/srv.csr" -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > "$W/srv.ext"
openssl x509 -req -in "$W/srv.csr" -CA "$W/ca.crt" -CAkey "$W/ca.key" -CAcreateserial -days 1 \
  -extfile "$W/srv.ext" -out "$W/srv.crt" 2>/dev/null

# --- Registry storage with two blobs, placed directly -------------------------------------------
place_blob() { # file repo
  local d; d="$(sha256sum "$1" | cut -d' ' -f1)"
  mkdir -p "$W/store/docker/registry/v2/blobs/sha256/${d:0:2}/$d" \
           "$W/store/docker/registry/v2/repositories/$2/_layers/sha256/$d"
  mv "$1" "$W/store/docker/registry/v2/blobs/sha256/${d:0:2}/$d/data"
  printf 'sha256:%s' "$d" > "$W/store/docker/registry/v2/repositories/$2/_layers/sha256/$d/link"
  echo "sha256:$d"
}
echo "bench/registry: preparing blobs (1 GiB + 4 MiB)..."
BIG_BYTES=$((1024*1024*1024)); [[ " ${BENCH_CASES:-big} " == *" big "* ]] || BIG_BYTES=1
head -c "$BIG_BYTES" /dev/urandom > "$W/big.bin"
BIG="$(place_blob "$W/big.bin" bench/big)"
head -c $((4*1024*1024)) /dev/urandom > "$W/small.bin"
SMALL="$(place_blob "$W/small.bin" bench/small)"

RP="$(free_port)"
cat > "$W/registry.yml" <<YML
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $W/store
http:
  addr: 127.0.0.1:$RP
  secret: bench
  tls:
    certificate: $W/srv.crt
    key: $W/srv.key
YML
docker-registry serve "$W/registry.yml" > "$W/registry.log" 2>&1 &
REG_PID=$!; PIDS+=("$REG_PID")

# --- nginx: two servers, one worker ---------------------------------------------------------------
NP="$(free_port)"; NPD="$(free_port)"
mkdir -p "$W/nginx-tmp"
USER_LINE=""; [ "$(id -u)" = 0 ] && USER_LINE="user root;"
cat > "$W/nginx.conf" <<NGX
$USER_LINE
worker_processes 1;
pid $W/nginx.pid;
error_log $W/nginx-error.log error;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $W/nginx-tmp/body; proxy_temp_path $W/nginx-tmp/proxy;
  fastcgi_temp_path $W/nginx-tmp/fcgi; uwsgi_temp_path $W/nginx-tmp/uwsgi; scgi_temp_path $W/nginx-tmp/scgi;
  upstream registry { server 127.0.0.1:$RP; keepalive 256; }
  server {
    listen 127.0.0.1:$NP ssl;
    ssl_certificate $W/srv.crt; ssl_certificate_key $W/srv.key;
    location /v2/ {
      proxy_pass https://registry; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_set_header Accept-Encoding identity;
      proxy_buffering off; proxy_buffer_size 256k; proxy_buffers 4 256k;
    }
  }
  server {
    listen 127.0.0.1:$NPD ssl;
    ssl_certificate $W/srv.crt; ssl_certificate_key $W/srv.key;
    location /v2/ {
      proxy_pass https://registry; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_set_header Accept-Encoding identity;
    }
  }
}
NGX
nginx -c "$W/nginx.conf" -p "$W" -g 'daemon on;'
sleep 0.5
NGINX_MASTER="$(cat "$W/nginx.pid")"
NGINX_WORKER="$(cat "/proc/$NGINX_MASTER/task/$NGINX_MASTER/children" | awk '{print $1}')"

# --- relay ----------------------------------------------------------------------------------------
"$RELAY_BIN" --cert "$W/srv.crt" --key "$W/srv.key" --cloudly "https://127.0.0.1:$RP" --ca "$W/ca.crt" \
  > "$W/relay.out" 2> "$W/relay.err" &
RELAY_PID=$!; PIDS+=("$RELAY_PID")
for _ in $(seq 100); do grep -q PORT "$W/relay.out" 2>/dev/null && break; sleep 0.1; done
RLP="$(awk '/PORT/{print $2}' "$W/relay.out")"
for _ in $(seq 100); do curl -s --cacert "$W/ca.crt" -o /dev/null "https://127.0.0.1:$RP/v2/" && break; sleep 0.1; done

CURL=(curl -s --http1.1 --cacert "$W/ca.crt" -o /dev/null)
declare -A PORT=([direct]=$RP [nginx]=$NP [nginx-dflt]=$NPD [relay]=$RLP)
declare -A PID=([direct]=$REG_PID [nginx]=$NGINX_WORKER [nginx-dflt]=$NGINX_WORKER [relay]=$RELAY_PID)
read -r -a ORDER <<< "${BENCH_PATHS:-direct nginx nginx-dflt relay}"
CASES=" ${BENCH_CASES:-lat big conc} "
want() { [[ "$CASES" == *" $1 "* ]]; }
RAW="$W/raw.txt"; : > "$RAW"

# Paths alternate within each round, so that a slow spell of this shared machine touches every path
# alike; the summary compares medians over the rounds (BENCH_ROUNDS, default 3).
ROUNDS="${BENCH_ROUNDS:-3}"
for round in $(seq "$ROUNDS"); do
for path in "${ORDER[@]}"; do
  url="https://127.0.0.1:${PORT[$path]}/v2"
  pid="${PID[$path]}"
  # Header latency: median (time_starttransfer - time_appconnect) over 20 GETs, ms.
  lat=- big_mbs=- big_rss=- conc_mbs=- conc_rss=- ok=- conc_cpu=-
  want lat && lat="$(for _ in $(seq 20); do "${CURL[@]}" -w '%{time_appconnect} %{time_starttransfer}\n' "$url/bench/small/blobs/$SMALL"; done \
        | awk '{printf "%.3f\n", ($2-$1)*1000}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')"
  # 1 GiB blob, one stream.
  if want big; then
  base="$(kib "$pid" VmRSS)"; reset_peak "$pid"
  bps="$("${CURL[@]}" -w '%{speed_download}' "$url/bench/big/blobs/$BIG")"
  peak="$(kib "$pid" VmHWM)"
  big_mbs="$(awk -v b="$bps" 'BEGIN{printf "%.0f", b/1e6}')"
  big_rss="$(awk -v p="$peak" -v b="$base" 'BEGIN{printf "%.1f", (p-b)/1024}')"
  fi
  # 200 concurrent 4 MiB blobs.
  if want conc; then
  : > "$W/urls.txt"
  for _ in $(seq 200); do echo "url = \"$url/bench/small/blobs/$SMALL\"" >> "$W/urls.txt"; echo "output = \"/dev/null\"" >> "$W/urls.txt"; done
  base="$(kib "$pid" VmRSS)"; reset_peak "$pid"
  PERF_PID=""
  if [ -n "${BENCH_PERF:-}" ]; then
    perf record ${BENCH_PERF_ARGS:--g} -o "$BENCH_PERF.$path" -p "$pid" 2>/dev/null & PERF_PID=$!; sleep 1
  fi
  c0="$(cpu_ticks "$pid")"
  t0="$(date +%s.%N)"
  curl -s --http1.1 --cacert "$W/ca.crt" --parallel --parallel-max 200 --parallel-immediate -K "$W/urls.txt" \
    -w '%{http_code}\n' > "$W/codes.txt" 2>/dev/null
  t1="$(date +%s.%N)"
  c1="$(cpu_ticks "$pid")"
  conc_cpu="$(awk -v a="$c0" -v b="$c1" -v t="$(getconf CLK_TCK)" 'BEGIN{printf "%.2f", (b-a)/t}')"
  [ -n "$PERF_PID" ] && { kill -INT "$PERF_PID"; wait "$PERF_PID" || true; }
  peak="$(kib "$pid" VmHWM)"
  ok="$(grep -c '^200$' "$W/codes.txt" || true)"
  conc_mbs="$(awk -v a="$t0" -v b="$t1" -v n="$ok" 'BEGIN{printf "%.0f", n*4194304/(b-a)/1e6}')"
  conc_rss="$(awk -v p="$peak" -v b="$base" 'BEGIN{printf "%.1f", (p-b)/1024}')"
  fi
  echo "$path $big_mbs $big_rss $conc_mbs $ok $conc_rss $lat $conc_cpu $round" >> "$RAW"
  printf '%-11s 1GiB %6s MB/s  rss+ %7s MiB | 200x4MiB %6s MB/s (%3s ok)  rss+ %7s MiB  cpu %5s s | headers %7s ms  (round %s)\n' \
    "$path" "$big_mbs" "$big_rss" "$conc_mbs" "$ok" "$conc_rss" "$conc_cpu" "$lat" "$round"
done
done

# Slow client (figure moved out of tst_registryproxy/tst_registrylistener, which keep only the functional
# check): one client reads the 1 GiB blob through the relay at 2 MB/s for 5 s; the relay's peak RSS growth
# meanwhile shows it holds its watermark, not the body. BENCH_CASES must name "slow" (default: it runs).
if [[ " ${BENCH_CASES:-slow} " == *" slow "* ]]; then
  base="$(kib "$RELAY_PID" VmRSS)"; reset_peak "$RELAY_PID"
  got="$("${CURL[@]}" --limit-rate 2M --max-time 5 -w '%{size_download}' "https://127.0.0.1:$RLP/v2/bench/big/blobs/$BIG" || true)"
  peak="$(kib "$RELAY_PID" VmHWM)"
  printf 'slow client (2 MB/s, 5 s, relay): read %s MiB, relay rss+ %s MiB (goal: within the 16 MiB in-flight budget)\n' \
    "$(awk -v g="${got:-0}" 'BEGIN{printf "%.1f", g/1048576}')" "$(awk -v p="$peak" -v b="$base" 'BEGIN{printf "%.1f", (p-b)/1024}')"
fi

echo "bench/registry: 'rss+' is the peak RSS growth of the process serving the path (registry for direct,"
echo "the nginx worker for nginx, the relay for relay); cpu = its CPU time (user+system) during the 200x4MiB"
echo "workload; headers = median ms from TLS up to first byte."
awk '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    if (n == 0) return ""
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  $2 != "-" { big[$1] = big[$1] " " $2 }
  $4 != "-" { conc[$1] = conc[$1] " " $4 }
  $7 != "-" { lat[$1] = lat[$1] " " $7 }
  $1 == "relay" && $3 != "-" && $3 + 0 > rr + 0 { rr = $3 }
  $1 == "nginx" { nb[$9] = $2; nc[$9] = $4 }
  $1 == "relay" { rounds = rounds " " $9; rb[$9] = $2; rc[$9] = $4 }
  END {
    n1 = median(big["nginx"]); r1 = median(big["relay"]); ncm = median(conc["nginx"]); rcm = median(conc["relay"])
    if (n1 + 0 == 0 || ncm + 0 == 0 || r1 == "" || rcm == "") exit
    per = ""
    k = split(rounds, rs, " ")
    for (i = 1; i <= k; i++) if (nb[rs[i]] + 0 > 0 && nc[rs[i]] + 0 > 0)
      per = per sprintf(" %.0f%%/%.0f%%", 100 * rb[rs[i]] / nb[rs[i]], 100 * rc[rs[i]] / nc[rs[i]])
    printf "relay/nginx throughput, medians over %d round(s): 1GiB %.0f%% (%s vs %s MB/s), 200x4MiB %.0f%% (%s vs %s MB/s) (goal >= 90%%)\n", k, 100*r1/n1, r1, n1, 100*rcm/ncm, rcm, ncm
    printf "per round (1GiB/200x4MiB):%s\n", per
    dl = median(lat["direct"]); rl = median(lat["relay"])
    if (dl != "")
      printf "relay RSS growth for 1 GiB: %s MiB at most (goal < 32 MiB); relay header latency %.1f ms vs direct %.1f ms (goal +50 ms)\n", rr, rl, dl
  }' "$RAW"
