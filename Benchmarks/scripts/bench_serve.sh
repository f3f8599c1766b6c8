#!/usr/bin/env bash
# `badgeflow serve` under load: wrk (Debian's) on loopback against a RocksDB state of ACCOUNTS
# accounts (bench_fleet.sh's fleet) while `badgeflow filter` applies LINES events to it.
#
#   1. capacity: wrk as fast as it goes (2 threads, 16 connections, 10 s) on the idle state;
#   2. PAIRS pairs, side by side on fresh copies of the state: the filter alone, then the
#      filter while wrk sends RATE requests/s (CONNS connections, each pausing between
#      requests: wrk's Lua `delay()`; Debian's wrk has no -R) for as long as the filter runs.
#      Each pair prints the filter's lines/s both ways and their ratio, and wrk's requests/s
#      and latency percentiles (p50, p90, p99) under the filter;
#   3. the median ratio over the pairs (target: within 10%; p99 at most 5 ms at 1,000 req/s).
#
# Requests read random accounts of the fleet (a0 … a(ACCOUNTS-1)), the device read every
# fourth time. The machine is shared: compare the ratios, not the absolute figures.
#
# Usage: Benchmarks/scripts/bench_serve.sh [ACCOUNTS] [LINES]   (default 1000000 2000000)
#        env RATE (1000), CONNS (10), PAIRS (2), BENCH_DIR (kept between runs when given),
#        SERVE_NICE (0: the server and wrk at the filter's priority; e.g. -10 gives them the
#        CPU first, as a service unit's Nice=/CPUWeight= would on a machine the filter keeps busy),
#        SERVE_RT (0; N in 1-99 runs the server and wrk under SCHED_FIFO priority N: `chrt -f N`,
#        as a unit's CPUSchedulingPolicy=fifo would: a request preempts the filter at once)
set -euo pipefail
ACCOUNTS=${1:-1000000}
LINES=${2:-2000000}
RATE=${RATE:-1000}
CONNS=${CONNS:-10}
PAIRS=${PAIRS:-2}
PORT=${PORT:-18480}
SERVE_NICE=${SERVE_NICE:-0}
SERVE_RT=${SERVE_RT:-0}
# How the server and wrk are started: at nice SERVE_NICE, or under SCHED_FIFO (SERVE_RT).
if [ "$SERVE_RT" != 0 ]; then PRIO=(chrt -f "$SERVE_RT"); else PRIO=(nice -n "$SERVE_NICE"); fi
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { apt-get install -y -qq wrk >/dev/null; }
BIN=${BIN:-.build/release/badgeflow}
SERVE=${SERVE:-Integrations/serve/.build/release/badgeflow-serve}
[ -x "$BIN" ] || swift build -c release --product badgeflow >/dev/null
[ -x "$SERVE" ] || (cd Integrations/serve && swift build -c release --product badgeflow-serve >/dev/null)
W=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$W"
echo "serve bench: $ACCOUNTS accounts, $LINES lines, $RATE req/s over $CONNS connections, server and wrk under: ${PRIO[*]}, in $W"
[ -s "$W/fleet.ndjson" ] || python3 Benchmarks/scripts/gen_fleet.py "$ACCOUNTS" "$LINES" 1 0 > "$W/fleet.ndjson"
if [ ! -d "$W/base.rocksdb" ]; then
  [ -s "$W/state.json" ] || python3 Benchmarks/scripts/gen_fleet_state.py "$ACCOUNTS" > "$W/state.json"
  "$BIN" state convert "$W/state.json" "$W/base.rocksdb" > /dev/null
fi

# The requests: random accounts, a device every fourth; each connection pauses so that all
# together send about RATE a second.
cat > "$W/reads.lua" <<LUA
local n = $ACCOUNTS
local pause = 1000 * $CONNS / $RATE
local i = 0
math.randomseed(48)
request = function()
  i = i + 1
  local a = math.random(0, n - 1)
  if i % 4 == 0 then return wrk.format("GET", "/v1/accounts/a" .. a .. "/devices/d0") end
  return wrk.format("GET", "/v1/accounts/a" .. a)
end
delay = function() return pause end
LUA
cat > "$W/fast.lua" <<LUA
local n = $ACCOUNTS
math.randomseed(7)
request = function() return wrk.format("GET", "/v1/accounts/a" .. math.random(0, n - 1)) end
LUA

serve_pid=
stop_serve() { [ -z "$serve_pid" ] || { kill -TERM "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null || true; serve_pid=; }; }
trap stop_serve EXIT
start_serve() {
  "${PRIO[@]}" "$SERVE" --state "$1" --listen "127.0.0.1:$PORT" 2> "$W/serve.err" &
  serve_pid=$!
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$PORT/healthz" > /dev/null && return; sleep 0.05; done
  cat "$W/serve.err"; exit 1
}
# wrk_summary FILE: "R req/s  p50 A  p90 B  p99 C" from wrk --latency's report.
wrk_summary() {
  awk '/Requests\/sec/ { r = $2 } /^ +50%/ { p50 = $2 } /^ +90%/ { p90 = $2 } /^ +99%/ { p99 = $2 }
       /Non-2xx/ { bad = $NF } /Socket errors/ { err = $0 }
       END { printf "%8.0f req/s  p50 %-8s p90 %-8s p99 %-8s%s%s", r, p50, p90, p99, bad ? "  non-2xx " bad : "", err ? "  " err : "" }' "$1"
}
# filter_run STATE: wall seconds of the filter over the stream.
filter_run() {
  /usr/bin/time -f "%e" -o "$W/time" "$BIN" filter --state "$1" --max-resident 100000 "$W/fleet.ndjson" > /dev/null 2> "$W/filter.err" \
    || { cat "$W/filter.err"; exit 1; }
  cat "$W/time"
}

rm -rf "$W/s.rocksdb"; cp -r "$W/base.rocksdb" "$W/s.rocksdb"
start_serve "$W/s.rocksdb"
wrk -t2 -c16 -d10s --latency -s "$W/fast.lua" "http://127.0.0.1:$PORT" > "$W/wrk-fast.txt"
echo "capacity (idle state, 2 threads, 16 connections, 10 s): $(wrk_summary "$W/wrk-fast.txt")"
stop_serve

: > "$W/ratios"
for p in $(seq 1 "$PAIRS"); do
  rm -rf "$W/s.rocksdb"; cp -r "$W/base.rocksdb" "$W/s.rocksdb"
  alone=$(filter_run "$W/s.rocksdb")
  rm -rf "$W/s.rocksdb"; cp -r "$W/base.rocksdb" "$W/s.rocksdb"
  start_serve "$W/s.rocksdb"
  # wrk for longer than the filter can take; stopped (SIGINT: it prints its report) when the filter ends.
  "${PRIO[@]}" wrk -t1 -c"$CONNS" -d600s --latency -s "$W/reads.lua" "http://127.0.0.1:$PORT" > "$W/wrk-$p.txt" &
  wrk_pid=$!
  sleep 1
  loaded=$(filter_run "$W/s.rocksdb")
  kill -INT "$wrk_pid"; wait "$wrk_pid" || true
  seq_served=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^badgeflow_committed_seq/ { print $2 }')
  stop_serve
  awk -v a="$alone" -v l="$loaded" -v n="$LINES" -v p="$p" -v s="$seq_served" -v w="$(wrk_summary "$W/wrk-$p.txt")" 'BEGIN {
    printf "pair %d: filter alone %6.2f s (%7.0f lines/s), under reads %6.2f s (%7.0f lines/s): %.3f of alone\n", p, a, n / a, l, n / l, a / l
    printf "        reads during the filter: %s  (served seq at the end %s)\n", w, s
  }'
  awk -v a="$alone" -v l="$loaded" 'BEGIN { print a / l }' >> "$W/ratios"
done
sort -n "$W/ratios" | awk '{ r[NR] = $1 } END { printf "median ratio (filter under reads / alone, lines/s): %.3f over %d pairs\n", (NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2), NR }'
