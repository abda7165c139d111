#!/usr/bin/env bash
# ./run fuzz [--seconds N] [--runs N] [--smoke] [target...]: builds the libFuzzer targets (clang-14,
# -fsanitize=fuzzer,address,undefined; docs/architecture.md "Fuzzing") in build-sanitize/, the one
# sanitizer tree that also holds the ASan+UBSan test suite (./run test --sanitize, D-120; only the
# fuzz targets and what they need are built here), and runs each one.
#   --seconds N  each target for N seconds (default 30), growing its working corpus
#                build-sanitize/corpus/<t> from the committed seeds fuzz/corpus/<t>
#   --runs N     each target until N executions (libFuzzer -runs=N), with no time limit unless
#                --seconds is given as well (then it stops at whichever comes first)
#   --smoke      each target once over its committed seeds and nothing else (CI's check)
# Exit 1 when a target finds a crash, a leak, a sanitizer report or a failed check; the reproducer is
# written to build-sanitize/findings/. The last line per target: executions, cov:, ft: and wall seconds.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds=30
seconds_given=0
runs=""
smoke=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; seconds_given=1; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --smoke) smoke=1; shift ;;
    *) targets+=("$1"); shift ;;
  esac
done
dir=build-sanitize
extra=()
if command -v ccache >/dev/null 2>&1; then
  extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime # run: build()
fi
# The same configuration as ./run build --sanitize (run: build()), so the two share one tree.
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_COMPILER=clang++-14 -DCOREFLOW_SANITIZE=ON -DCOREFLOW_FUZZ=ON \
  "${extra[@]}" >/dev/null
[ ${#targets[@]} -eq 0 ] && mapfile -t targets < <(cd fuzz && ls fuzz_*.cpp | sed 's/\.cpp$//')
cmake --build "$dir" -j"$(nproc)" --target "${targets[@]}"

dictionary() {
  case "$1" in
    fuzz_envelope|fuzz_contract_types|fuzz_offers|fuzz_escrow_run|fuzz_route_table|fuzz_vpn_network|fuzz_ingress_registration|fuzz_registration_acceptance|fuzz_status_lines|fuzz_isolated_restore_*)
      echo "-dict=fuzz/dict/json.dict" ;;
    fuzz_http_response|fuzz_http_request|fuzz_registry_headers|fuzz_www_authenticate|fuzz_listener_*|fuzz_http_*)
      echo "-dict=fuzz/dict/http.dict" ;;
  esac
}

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export QT_QPA_PLATFORM=offscreen
mkdir -p "$dir/findings" "$dir/logs"
limits=(-max_total_time="$seconds")
if [ -n "$runs" ]; then
  limits=(-runs="$runs")
  [ "$seconds_given" = 1 ] && limits+=(-max_total_time="$seconds")
fi
failed=()
for t in "${targets[@]}"; do
  seeds="fuzz/corpus/$t"
  log="$dir/logs/$t.log"
  dict="$(dictionary "$t")"
  start=$SECONDS
  if [ "$smoke" = 1 ]; then
    # shellcheck disable=SC2086
    if ! "$dir/fuzz/$t" -runs=0 -rss_limit_mb=2048 $dict "$seeds" >"$log" 2>&1; then failed+=("$t"); fi
  else
    work="$dir/corpus/$t"
    mkdir -p "$work"
    # shellcheck disable=SC2086
    if ! "$dir/fuzz/$t" "${limits[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$dir/findings/$t-" $dict "$work" "$seeds" >"$log" 2>&1; then failed+=("$t"); fi
  fi
  stats="$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -E 's/^#([0-9]+)\s+[A-Z]+\s+/\1 runs /; s/ exec\/s.*//')"
  printf '%-32s %s (%d s)\n' "$t" "${stats:-no stats (see $log)}" "$((SECONDS - start))"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in: ${failed[*]} (logs in $dir/logs, reproducers in $dir/findings)"
  exit 1
fi
echo "fuzz: ${#targets[@]} target(s) clean"
