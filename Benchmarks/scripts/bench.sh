#!/usr/bin/env bash
# bench.sh [--validate] [LINES...] -- throughput of `badgeflow filter` against peers.
#
# For each size (default: 100000 1000000) generates one event stream with
# gen_stream.py (cached in Benchmarks/.data/), then runs on that same file:
# badgeflow filter, jq (peer_route.jq), the orjson peer and parse_only (json-c
# parsing alone; again with --strict, BadgeFlow's tokener flags), each with
# stdout to /dev/null. RUNS rounds (default 3) each run every tool once, so
# a shared host's changing speed hits all tools alike; wall time comes from
# bash's EPOCHREALTIME (µs; GNU time's %e is only 10 ms) and peak RSS from
# `/usr/bin/time -f '%e %M'`. Prints lines/s median (min..max), MB/s, peak
# RSS, and badgeflow's ratios per round as median (min..max).
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
        -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# Tools are registered per input file with `tool`, then run round-robin: round r
# runs every tool once, so a machine that speeds up or slows down during the
# benchmark (shared hosts do) affects all of them alike. Ratios are computed per
# round and reported as median (min..max).
TOOLS=()
declare -A CMD=() OK=() RATES=() MAXRSS=() DEAD=()

# tool LABEL OKCODES CMD... : registers CMD (stdin: the input file, stdout: /dev/null).
tool() {
    local label=$1 ok=$2; shift 2
    TOOLS+=("$label"); OK[$label]=$ok; CMD[$label]=$(printf '%q ' "$@")
    RATES[$label]=""; MAXRSS[$label]=0; DEAD[$label]=0
}

# contract FILE : each non-parse_only tool writes one line per input line (first 1000).
contract() {
    local file=$1 t got want cmd
    want=$(head -n 1000 "$file" | wc -l)
    for t in "${TOOLS[@]}"; do
        case $t in parse_only*) continue ;; esac
        eval "cmd=(${CMD[$t]})"
        got=$(head -n 1000 "$file" | "${cmd[@]}" 2>/dev/null | wc -l || true)
        [ "$got" -eq "$want" ] || echo "warning: $t wrote $got lines for the first $want input lines" >&2
    done
}

# once LABEL FILE : one timed run; appends lines/s to RATES[LABEL].
once() {
    local label=$1 file=$2 lines t0 t1 rc secs rss cmd
    [ "${DEAD[$label]}" = 1 ] && return 0
    eval "cmd=(${CMD[$label]})"
    lines=$(wc -l < "$file")
    t0=$EPOCHREALTIME
    rc=0; "$TIME" -f '%e %M' -o "$TMP/time" "${cmd[@]}" < "$file" > /dev/null 2> "$TMP/err" || rc=$?
    t1=$EPOCHREALTIME
    if [[ " ${OK[$label]} " != *" $rc "* ]]; then
        echo "$label: exit status $rc; skipped. stderr:" >&2; head -n 5 "$TMP/err" >&2
        DEAD[$label]=1; return 0
    fi
    read -r _ rss < <(tail -n 1 "$TMP/time")
    secs=$(awk -v a="${t0/,/.}" -v b="${t1/,/.}" 'BEGIN { printf "%.6f", b - a }')
    RATES[$label]+="$(awk -v n="$lines" -v s="$secs" 'BEGIN { printf "%.3f", n / (s > 0 ? s : 1e-6) }') "
    [ "$rss" -gt "${MAXRSS[$label]}" ] && MAXRSS[$label]=$rss
    return 0
}

header() {
    printf '%-20s %9s %12s %23s %8s %8s\n' tool lines 'lines/s' '(min..max)' 'MB/s' 'RSS MB'
}

# run FILE : RUNS rounds over the registered tools, then a row per tool.
run() {
    local file=$1 r t lines bytes lo med hi
    lines=$(wc -l < "$file"); bytes=$(wc -c < "$file")
    contract "$file"
    for ((r = 0; r < RUNS; r++)); do
        for t in "${TOOLS[@]}"; do once "$t" "$file"; done
    done
    for t in "${TOOLS[@]}"; do
        [ "${DEAD[$t]}" = 1 ] && continue
        # shellcheck disable=SC2086
        read -r lo med hi < <(stats ${RATES[$t]})
        awk -v t="$t" -v n="$lines" -v lo="$lo" -v med="$med" -v hi="$hi" \
            -v bytes="$bytes" -v rss="${MAXRSS[$t]}" 'BEGIN {
            printf "%-20s %9d %12.0f %23s %8.1f %8.1f\n", t, n, med,
                sprintf("(%.0f..%.0f)", lo, hi), med * bytes / n / 1e6, rss / 1024 }'
    done
}

ratio() {  # ratio A B -> per-round A/B: median (min..max), or n/a
    local a=${RATES[$1]:-} b=${RATES[$2]:-}
    if [ -n "$a" ] && [ -n "$b" ] && [ "${DEAD[$1]}" != 1 ] && [ "${DEAD[$2]}" != 1 ]; then
        # shellcheck disable=SC2086
        read -r lo med hi < <(paste -d' ' <(printf '%s\n' $a) <(printf '%s\n' $b) |
            awk '{ print $1 / $2 }' | sort -g | awk '{v[NR]=$1} END {
                m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
                printf "%.2f %.2f %.2f\n", v[1], m, v[NR] }')
        printf '  %-28s %6s  (%s..%s)\n' "$1/$2" "$med" "$lo" "$hi"
    else
        printf '  %-28s %6s\n' "$1/$2" n/a
    fi
}

reset_tools() { TOOLS=(); CMD=(); OK=(); RATES=(); MAXRSS=(); DEAD=(); }

echo "machine: $(nproc) CPU(s), RUNS=$RUNS (round-robin), $(uname -sm)"
for n in "${SIZES[@]}"; do
    file=$(gen gen_stream.py "$n")
    echo
    echo "== filter, $n lines ($(( $(wc -c < "$file") / n )) bytes/line avg): $file"
    reset_tools
    if [ $have_badgeflow = 1 ]; then tool badgeflow "0 1" "$BADGEFLOW" filter; fi
    if [ $have_jq = 1 ]; then tool jq 0 "$JQ" -c -f "$SCRIPTS/peer_route.jq"; fi
    if [ $have_orjson = 1 ]; then tool orjson 0 "$PYTHON" "$SCRIPTS/peer_orjson.py"; fi
    if [ $have_parse = 1 ]; then
        tool parse_only 0 "$PARSE"
        # The same loop with the tokener flags BadgeFlow uses (strict JSON, UTF-8 checked).
        tool parse_only_strict 0 "$PARSE" --strict
    fi
    header
    run "$file"
    echo "ratios (per round, median (min..max); >1 means badgeflow is faster):"
    ratio badgeflow jq; ratio badgeflow orjson; ratio badgeflow parse_only; ratio badgeflow parse_only_strict
done

if [ $VALIDATE = 1 ]; then
    file=$(gen gen_payloads.py 100000)
    echo
    echo "== validate, 100000 payloads: $file"
    reset_tools
    # validate exits 1 when a payload is invalid (the ExitCodes article); ~5% are, by design.
    if [ $have_badgeflow = 1 ]; then tool validate "0 1" "$BADGEFLOW" validate --json; fi
    if [ $have_parse = 1 ]; then tool parse_only 0 "$PARSE"; fi
    header
    run "$file"
    echo "ratios (per round, median (min..max)):"
    ratio validate parse_only
fi
