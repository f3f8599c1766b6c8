#!/usr/bin/env bash
# bench.sh [--validate] [LINES...] -- throughput of `badgeflow filter` against peers.
#
# For each size (default: 100000 1000000) generates one event stream with
# gen_stream.py (cached in Benchmarks/.data/), then runs on that same file:
# badgeflow filter, jq (peer_route.jq), the orjson peer and parse_only (json-c
# parsing alone; again with --strict, BadgeFlow's tokener flags), each with
# stdout to /dev/null. Every measurement is repeated
# RUNS times (default 3); wall time comes from bash's EPOCHREALTIME (µs; GNU
# time's %e is only 10 ms) and peak RSS from `/usr/bin/time -f '%e %M'`.
# Prints lines/s median (min..max), MB/s, peak RSS and badgeflow's ratios.
# --validate adds `badgeflow validate --json` on 100k gen_payloads.py lines
# (read from stdin), with parse_only on the same file for comparison.
#
# Env: BADGEFLOW (default <repo>/.build/release/badgeflow), RUNS, PYTHON, JQ.
# A missing tool is skipped with a message. This script never builds Swift.
set -euo pipefail

SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SCRIPTS/../.." && pwd)
DATA="$ROOT/Benchmarks/.data"
BADGEFLOW=${BADGEFLOW:-$ROOT/.build/release/badgeflow}
RUNS=${RUNS:-3}
PYTHON=${PYTHON:-python3}
JQ=${JQ:-jq}
TIME=/usr/bin/time

VALIDATE=0
SIZES=()
for arg in "$@"; do
    case $arg in
        --validate) VALIDATE=1 ;;
        -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        ''|*[!0-9]*) echo "bench.sh: not a line count: $arg" >&2; exit 2 ;;
        *) SIZES+=("$arg") ;;
    esac
done
[ ${#SIZES[@]} -gt 0 ] || SIZES=(100000 1000000)
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: RUNS must be a positive integer" >&2; exit 2; }
[ -x "$TIME" ] || { echo "bench.sh: $TIME (GNU time) is required" >&2; exit 2; }

mkdir -p "$DATA"
[ -f "$DATA/.gitignore" ] || printf '*\n' > "$DATA/.gitignore"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# --- tools ------------------------------------------------------------------
have_badgeflow=0; have_jq=0; have_orjson=0; have_parse=0
if [ -x "$BADGEFLOW" ]; then have_badgeflow=1; else echo "badgeflow: not built ($BADGEFLOW)"; fi
if command -v "$JQ" >/dev/null; then have_jq=1; else echo "jq: not found, skipped"; fi
if "$PYTHON" -c 'import orjson' 2>/dev/null; then have_orjson=1
else echo "orjson: $PYTHON cannot import orjson, skipped"; fi
PARSE="$DATA/parse_only"
if [ -x "$PARSE" ] && [ "$PARSE" -nt "$SCRIPTS/parse_only.c" ]; then have_parse=1
elif command -v cc >/dev/null && pkg-config --exists json-c 2>/dev/null &&
     cc -O2 "$SCRIPTS/parse_only.c" $(pkg-config --cflags --libs json-c) -o "$PARSE"; then
    have_parse=1
else echo "parse_only: cannot build (needs cc and libjson-c-dev), skipped"; fi

# gen SCRIPT N -> path of a cached file with N generated lines (seed 1)
gen() {
    local script=$1 n=$2 out
    out="$DATA/$(basename "$script" .py)_$n.ndjson"
    if [ ! -s "$out" ] || [ "$SCRIPTS/$script" -nt "$out" ] || [ "$SCRIPTS/gen_stream.py" -nt "$out" ]; then
        echo "generating $out" >&2
        "$PYTHON" "$SCRIPTS/$script" "$n" --seed 1 > "$out.tmp"
        mv "$out.tmp" "$out"
    fi
    echo "$out"
}

# stats V... -> "min median max" (numbers, one per argument)
stats() {
    printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {
        m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
        printf "%.0f %.0f %.0f\n", v[1], m, v[NR] }'
}

# measure LABEL FILE OKCODES CMD... : runs CMD <FILE >/dev/null RUNS times,
# prints a table row and records the median lines/s in RATE[LABEL].
declare -A RATE=()
measure() {
    local label=$1 file=$2 okcodes=$3; shift 3
    local lines bytes i t0 t1 rc secs rss maxrss=0 rates=()
    lines=$(wc -l < "$file"); bytes=$(wc -c < "$file")
    # Contract check on a small prefix: one output line per input line.
    local got
    got=$(head -n 1000 "$file" | "$@" 2>/dev/null | wc -l || true)
    case $label in parse_only*) ;; *)
        [ "$got" -eq "$(head -n 1000 "$file" | wc -l)" ] ||
            echo "warning: $label wrote $got lines for the first 1000 input lines" >&2 ;;
    esac
    for ((i = 0; i < RUNS; i++)); do
        t0=$EPOCHREALTIME
        rc=0; "$TIME" -f '%e %M' -o "$TMP/time" "$@" < "$file" > /dev/null 2> "$TMP/err" || rc=$?
        t1=$EPOCHREALTIME
        if [[ " $okcodes " != *" $rc "* ]]; then
            echo "$label: exit status $rc; skipped. stderr:" >&2; head -n 5 "$TMP/err" >&2
            return 0
        fi
        read -r _ rss < <(tail -n 1 "$TMP/time")
        secs=$(awk -v a="${t0/,/.}" -v b="${t1/,/.}" 'BEGIN { printf "%.6f", b - a }')
        rates+=("$(awk -v n="$lines" -v s="$secs" 'BEGIN { printf "%.3f", n / (s > 0 ? s : 1e-6) }')")
        [ "$rss" -gt "$maxrss" ] && maxrss=$rss
    done
    read -r lo med hi < <(stats "${rates[@]}")
    RATE[$label]=$med
    awk -v t="$label" -v n="$lines" -v lo="$lo" -v med="$med" -v hi="$hi" \
        -v bytes="$bytes" -v rss="$maxrss" 'BEGIN {
        printf "%-20s %9d %12.0f %23s %8.1f %8.1f\n", t, n, med,
            sprintf("(%.0f..%.0f)", lo, hi), med * bytes / n / 1e6, rss / 1024 }'
}

header() {
    printf '%-20s %9s %12s %23s %8s %8s\n' tool lines 'lines/s' '(min..max)' 'MB/s' 'RSS MB'
}

ratio() {  # ratio A B -> "A/B = x" using median lines/s, or n/a
    local a=${RATE[$1]:-} b=${RATE[$2]:-}
    if [ -n "$a" ] && [ -n "$b" ]; then
        awk -v a="$a" -v b="$b" -v n="$1/$2" 'BEGIN { printf "  %-28s %6.2f\n", n, a / b }'
    else
        printf '  %-28s %6s\n' "$1/$2" n/a
    fi
}

echo "machine: $(nproc) CPU(s), RUNS=$RUNS, $(uname -sm)"
for n in "${SIZES[@]}"; do
    file=$(gen gen_stream.py "$n")
    echo
    echo "== filter, $n lines ($(( $(wc -c < "$file") / n )) bytes/line avg): $file"
    header
    RATE=()
    if [ $have_badgeflow = 1 ]; then measure badgeflow "$file" "0 1" "$BADGEFLOW" filter; fi
    if [ $have_jq = 1 ]; then measure jq "$file" 0 "$JQ" -c -f "$SCRIPTS/peer_route.jq"; fi
    if [ $have_orjson = 1 ]; then measure orjson "$file" 0 "$PYTHON" "$SCRIPTS/peer_orjson.py"; fi
    if [ $have_parse = 1 ]; then
        measure parse_only "$file" 0 "$PARSE"
        # The same loop with the tokener flags BadgeFlow uses (strict JSON, UTF-8 checked).
        measure parse_only_strict "$file" 0 "$PARSE" --strict
    fi
    echo "ratios (median lines/s; >1 means badgeflow is faster):"
    ratio badgeflow jq; ratio badgeflow orjson; ratio badgeflow parse_only; ratio badgeflow parse_only_strict
done

if [ $VALIDATE = 1 ]; then
    file=$(gen gen_payloads.py 100000)
    echo
    echo "== validate, 100000 payloads: $file"
    header
    RATE=()
    # validate exits 1 when a payload is invalid (SPEC 6); ~5% are, by design.
    if [ $have_badgeflow = 1 ]; then measure validate "$file" "0 1" "$BADGEFLOW" validate --json; fi
    if [ $have_parse = 1 ]; then measure parse_only "$file" 0 "$PARSE"; fi
    echo "ratios (median lines/s):"
    ratio validate parse_only
fi
