#!/usr/bin/env bash
# Fleet figures: ACCOUNTS accounts (3 marks, 1-3 devices each) in a starting state, LINES
# events over them drawn at random. Lines/s and peak RSS of the release filter with no
# state, a JSON state, and SQLite and RocksDB states with --max-resident; the longest
# checkpoint; PAIRS runs of no state and RocksDB one right after the other, and the median
# of their ratios; `state info` and a one-account `tree` on both; then the SQLite and RocksDB
# floors (sqlite_floor.c, rocksdb_floor.c) and the ceilings they set.
#
# Usage: [BASE_BIN=path/to/older/badgeflow] Benchmarks/scripts/bench_fleet.sh [ACCOUNTS] [LINES] [MAX_RESIDENT] [HOT]
#        (default 1000000 2000000 100000 0; make bench-fleet ACCOUNTS=… FLEET_LINES=… HOT=…)
# HOT: the share of events that go to the busiest 5% of accounts (0: uniform).
set -euo pipefail
ACCOUNTS=${1:-1000000}
LINES=${2:-2000000}
RESIDENT=${3:-100000}
HOT=${4:-0}
PAIRS=${PAIRS:-3}
case $PAIRS in
  '' | *[!0-9]*) echo "bench_fleet.sh: PAIRS must be a whole number, got '$PAIRS'" >&2; exit 2 ;;
esac
PAIRS=$((10#$PAIRS))
cd "$(dirname "$0")/../.."
BIN=.build/release/badgeflow
[ -x "$BIN" ] || swift build -c release --product badgeflow >/dev/null
W=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$W"
echo "fleet: $ACCOUNTS accounts, $LINES lines (hot share $HOT), in $W"
[ -s "$W/state.json" ] || python3 Benchmarks/scripts/gen_fleet_state.py "$ACCOUNTS" > "$W/state.json"
[ -s "$W/fleet.ndjson" ] || python3 Benchmarks/scripts/gen_fleet.py "$ACCOUNTS" "$LINES" 1 "$HOT" > "$W/fleet.ndjson"

# run NAME CMD…: wall seconds, CPU seconds (user + system) and peak RSS (GNU time's %e, %U,
# %S and %M). On a shared host the wall time includes waiting for a core; lines per CPU
# second does not.
run() {
  local name=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$W/time" "$@" > /dev/null 2> "$W/$name.err" || { cat "$W/$name.err"; exit 1; }
  read -r secs user sys kib < "$W/time"
  awk -v n="$name" -v s="$secs" -v u="$user" -v y="$sys" -v k="$kib" -v l="$LINES" \
    -v f="$W/figures" 'BEGIN {
      c = u + y
      if (n ~ /^convert/) printf "%-28s %7.2f s wall %17s  %7.2f s CPU %21s  %6.0f MiB peak RSS\n", n, s, "", c, "", k / 1024
      else printf "%-28s %7.2f s wall %9.0f lines/s  %7.2f s CPU %9.0f lines/CPU-s  %6.0f MiB peak RSS\n", n, s, l / s, c, l / c, k / 1024
      print n, s, c >> f
    }'
}
: > "$W/figures"

run "no state" "$BIN" filter "$W/fleet.ndjson"
# BASE_BIN: an earlier build, run right after each of this build's runs on the same input, so
# the two are compared side by side in one run of a shared, noisy host.
if [ -n "${BASE_BIN:-}" ]; then run "no state (base)" "$BASE_BIN" filter "$W/fleet.ndjson"; fi
cp "$W/state.json" "$W/s.json"
run "JSON state" "$BIN" filter --state "$W/s.json" "$W/fleet.ndjson"
if [ -n "${BASE_BIN:-}" ]; then
  cp "$W/state.json" "$W/s.json"
  run "JSON state (base)" "$BASE_BIN" filter --state "$W/s.json" "$W/fleet.ndjson"
fi
rm -f "$W"/s.sqlite*
run "convert JSON -> SQLite" "$BIN" state convert "$W/state.json" "$W/s.sqlite"
run "SQLite --max-resident $RESIDENT" "$BIN" filter --state "$W/s.sqlite" --max-resident "$RESIDENT" --checkpoint-stats "$W/fleet.ndjson"
grep checkpoint "$W/SQLite --max-resident $RESIDENT.err" || true
if [ -n "${BASE_BIN:-}" ]; then
  rm -f "$W"/b.sqlite*
  "$BASE_BIN" state convert "$W/state.json" "$W/b.sqlite"
  run "SQLite (base)" "$BASE_BIN" filter --state "$W/b.sqlite" --max-resident "$RESIDENT" --checkpoint-stats "$W/fleet.ndjson"
  grep checkpoint "$W/SQLite (base).err" || true
  rm -f "$W"/b.sqlite*
fi
rm -rf "$W/s.rocksdb" "$W/p0.rocksdb"
run "convert JSON -> RocksDB" "$BIN" state convert "$W/state.json" "$W/s.rocksdb"
# Kept as converted, for the pairs below.
[ "$PAIRS" -eq 0 ] || cp -r "$W/s.rocksdb" "$W/p0.rocksdb"
run "RocksDB --max-resident $RESIDENT" "$BIN" filter --state "$W/s.rocksdb" --max-resident "$RESIDENT" --checkpoint-stats "$W/fleet.ndjson"
grep checkpoint "$W/RocksDB --max-resident $RESIDENT.err" || true
# The same with a block cache that holds the uniform fleet's data blocks (ROCKS_CACHE, 160M
# unless set; empty: not run), on a state converted again, as the first run changed it.
ROCKS_CACHE=${ROCKS_CACHE-160M}
if [ -n "$ROCKS_CACHE" ]; then
  rm -rf "$W/c.rocksdb"
  "$BIN" state convert "$W/state.json" "$W/c.rocksdb" > /dev/null
  run "RocksDB --block-cache $ROCKS_CACHE" "$BIN" filter --state "$W/c.rocksdb" --max-resident "$RESIDENT" --block-cache "$ROCKS_CACHE" --checkpoint-stats "$W/fleet.ndjson"
  grep checkpoint "$W/RocksDB --block-cache $ROCKS_CACHE.err" || true
  rm -rf "$W/c.rocksdb"
fi
if [ -n "${BASE_BIN:-}" ]; then
  rm -rf "$W/b.rocksdb"
  "$BASE_BIN" state convert "$W/state.json" "$W/b.rocksdb" > /dev/null
  run "RocksDB (base)" "$BASE_BIN" filter --state "$W/b.rocksdb" --max-resident "$RESIDENT" --checkpoint-stats "$W/fleet.ndjson"
  grep checkpoint "$W/RocksDB (base).err" || true
  rm -rf "$W/b.rocksdb"
fi
# Pairs: no state and RocksDB (default cache), run one right after the other PAIRS times
# (3 unless set; 0: not run), each RocksDB run on a fresh copy of the converted state. On a
# shared host a neighbour's load can slow one row above by 15% or more; a pair's two runs
# share most of it, so the median of the pairs' ratios is the figure to compare.
if [ "$PAIRS" -gt 0 ]; then
  : > "$W/pairs"
  for i in $(seq 1 "$PAIRS"); do
    /usr/bin/time -f "%e" -o "$W/time" "$BIN" filter "$W/fleet.ndjson" > /dev/null 2> "$W/pair.err" ||
      { cat "$W/pair.err"; exit 1; }
    ns=$(cat "$W/time")
    rm -rf "$W/p.rocksdb"; cp -r "$W/p0.rocksdb" "$W/p.rocksdb"
    /usr/bin/time -f "%e" -o "$W/time" "$BIN" filter --state "$W/p.rocksdb" --max-resident "$RESIDENT" "$W/fleet.ndjson" > /dev/null 2> "$W/pair.err" ||
      { cat "$W/pair.err"; exit 1; }
    rs=$(cat "$W/time")
    # GNU time's %e has two decimals: a run under 5 ms reads 0.00, counted as 0.01.
    awk -v i="$i" -v ns="$ns" -v rs="$rs" -v l="$LINES" -v f="$W/pairs" 'BEGIN {
      if (ns <= 0) ns = 0.01; if (rs <= 0) rs = 0.01
      printf "pair %d: no state %.2f s (%.0f lines/s), RocksDB --max-resident %.2f s (%.0f lines/s): %.1f%%\n", i, ns, l / ns, rs, l / rs, 100 * ns / rs
      print 100 * ns / rs >> f }'
  done
  sort -n "$W/pairs" | awk '{ r[NR] = $1 } END { m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
    printf "pairs: RocksDB at %.1f%% of the no-state rate (median of %d; lowest %.1f%%, highest %.1f%%)\n", m, NR, r[1], r[NR] }'
  rm -rf "$W/p.rocksdb" "$W/p0.rocksdb"
fi
ls -l "$W/s.json" "$W/s.sqlite" | awk '{ print $5, $9 }'
rocks=$(du -sb "$W/s.rocksdb" | cut -f1)
echo "$rocks $W/s.rocksdb"
echo "bytes per account: JSON $(( $(stat -c %s "$W/s.json") / ACCOUNTS )), SQLite $(( $(stat -c %s "$W/s.sqlite") / ACCOUNTS )), RocksDB $(( rocks / ACCOUNTS ))"
for cmd in "state info $W/s.sqlite" "tree --state $W/s.sqlite --account a$((ACCOUNTS / 2))" \
  "state info $W/s.rocksdb" "tree --state $W/s.rocksdb --account a$((ACCOUNTS / 2))"; do
  best=9999
  for _ in 1 2 3 4 5; do
    s=$(date +%s%N); "$BIN" $cmd > /dev/null; e=$(date +%s%N)
    ms=$(( (e - s) / 1000000 )); [ "$ms" -lt "$best" ] && best=$ms
  done
  echo "badgeflow $cmd: ${best} ms (best of 5)"
done
"$BIN" state info "$W/s.sqlite"
"$BIN" state info "$W/s.rocksdb"

# ceiling NAME US: a store whose floor costs US µs of CPU per account, plus a no-state line's
# CPU, spread over every core with nothing else in the way: the most lines/s a run of a
# uniform stream (where nearly every event loads and writes an account) can reach here,
# however well its threads overlap.
ceiling() {
  awk -v name="$1" -v us="$2" -v cores="$(nproc)" -v lines="$LINES" '
    $1 == "no" && $3 != "(base)" { wall = $3; cpu = $4 }
    END {
      if (wall == "" || us == 0) exit
      line = cpu / lines * 1e6; cap = cores / (line + us) * 1e6
      printf "ceiling: %.1f us of %s floor + %.1f us of CPU per no-state line on %d cores = about %.0f lines/s at most, %.0f%% of the no-state rate\n", us, name, line, cores, cap, 100 * cap / (lines / wall)
    }' "$W/figures"
}

# SQLite's own floor (sqlite_floor.c): the row reads, upserts and commits of a uniform
# stream, on one thread, with nothing decoded or encoded, against the run's database. Not
# run for HOT streams, where most events find their account in memory.
N=$(( LINES < 400000 ? LINES : 400000 ))
FLOOR="$W/sqlite_floor"
if [ "$HOT" != 0 ]; then
  :
elif [ -x "$FLOOR" ] && [ "$FLOOR" -nt Benchmarks/scripts/sqlite_floor.c ] ||
   cc -O2 Benchmarks/scripts/sqlite_floor.c -lsqlite3 -o "$FLOOR" 2>/dev/null; then
  cp "$W/s.sqlite" "$W/floor.sqlite"; rm -f "$W"/floor.sqlite-*
  "$FLOOR" "$W/floor.sqlite" "$ACCOUNTS" "$N" | tee "$W/floor.txt"
  cp "$W/s.sqlite" "$W/floor.sqlite"; rm -f "$W"/floor.sqlite-*
  "$FLOOR" "$W/floor.sqlite" "$ACCOUNTS" "$N" --sorted | tee -a "$W/floor.txt"
  rm -f "$W"/floor.sqlite*
  # The key-order floor: the filter sorts its commits.
  us=$(awk '/key order/ { for (i = 1; i <= NF; i++) if ($i == "us," || $i == "us") us += $(i - 1) } END { print us + 0 }' "$W/floor.txt")
  ceiling SQLite "$us"
else
  echo "sqlite_floor: cannot build (needs cc and libsqlite3-dev), skipped"
fi

# RocksDB's floor (rocksdb_floor.c): the same accounts read (Get, or MultiGet 1,024 at a
# time) and written back in one WriteBatch a checkpoint (WAL synced, or WAL off and a
# flush), with the flushes and compactions that follow counted, over ACCOUNTS keys with
# ~100-byte values of its own (the account's binary form is about that size). The ceiling
# takes the cheapest way with the default cache, and the one with the --block-cache run's.
FLOOR="$W/rocksdb_floor"
if [ "$HOT" != 0 ]; then
  :
elif [ -x "$FLOOR" ] && [ "$FLOOR" -nt Benchmarks/scripts/rocksdb_floor.c ] ||
   cc -O2 Benchmarks/scripts/rocksdb_floor.c -lrocksdb -o "$FLOOR" 2>/dev/null; then
  rm -rf "$W/floor.rocksdb"
  : > "$W/floor.txt"
  # The last two as the store works: keys sorted in each batch, and with the cache of the
  # --block-cache run (ROCKS_CACHE in MiB), the floor of that run.
  cache_mib=$(echo "${ROCKS_CACHE:-64M}" | awk '{ n = $0 + 0; u = toupper(substr($0, length($0)))
    if (u == "G") n *= 1024; else if (u == "K") n = int(n / 1024); else if (u != "M") n = int(n / 1048576)
    print (n > 0 ? n : 64) }')
  for opts in "" "--multiget" "--no-wal" "--multiget --no-wal" "--multiget --no-wal --sorted" \
    "--multiget --no-wal --sorted --cache $cache_mib"; do
    # shellcheck disable=SC2086
    "$FLOOR" "$W/floor.rocksdb" "$ACCOUNTS" "$N" $opts | tee -a "$W/floor.txt"
  done
  rm -rf "$W/floor.rocksdb"
  # rfloor MIB: the cheapest total of the runs with a cache of MIB MiB.
  rfloor() {
    awk -v mib="$1" '$0 ~ (", " mib " MiB cache") { for (i = 1; i < NF; i++) if ($i == "total") { t = $(i + 1); if (best == "" || t < best) best = t } }
      END { print best + 0 }' "$W/floor.txt"
  }
  ceiling "RocksDB (64 MiB cache)" "$(rfloor 64)"
  [ "$cache_mib" = 64 ] || ceiling "RocksDB ($cache_mib MiB cache)" "$(rfloor "$cache_mib")"
else
  echo "rocksdb_floor: cannot build (needs cc and librocksdb-dev: make deps), skipped"
fi
