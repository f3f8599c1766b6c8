#!/usr/bin/env bash
# callgrind_check.sh [--record] [BIN] -- fail when a line of `badgeflow filter --jobs 1` costs
# more instructions than Benchmarks/Thresholds/instructions-per-line.json allows.
#
# Runs callgrind_line.sh once (RUNS=1) on the threshold file's stream (gen_stream.py LINES
# --seed 1, output md5 checked against the same binary without valgrind) and divides the
# run's instruction total, start-up included, by LINES. Exit 0 when that is at or below
# "threshold", 1 when it is above. Instruction counts do not depend on the host's load, but
# json-c seeds its hash per process (up to ~0.2k a line between runs) and glibc picks its
# string functions by CPU: the threshold keeps a margin over the measured value.
#
# --record: measure RECORD_RUNS times (default 3) and rewrite the file with the highest count
# as "measured" and threshold = measured x (1 + margin), margin 0.02 unless MARGIN is set.
# Do that on purpose only (a toolchain change, an accepted cost), and say why in the commit.
# BIN defaults to <repo>/.build/release/badgeflow. Never builds Swift (make bench-check does).
set -euo pipefail

SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SCRIPTS/../.." && pwd)
FILE="$ROOT/Benchmarks/Thresholds/instructions-per-line.json"
PYTHON=${PYTHON:-python3}

record=0
case ${1:-} in
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --record) record=1; shift ;;
esac
[ $# -le 1 ] || { echo "callgrind_check.sh: at most one argument besides --record, the binary" >&2; exit 2; }
BIN=${1:-$ROOT/.build/release/badgeflow}
[ -f "$FILE" ] || { echo "callgrind_check.sh: no threshold file $FILE" >&2; exit 2; }

# field NAME -> the threshold file's top-level member NAME
field() { "$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$FILE" "$1"; }
lines=$(field lines)

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# measure N -> the highest of N runs' instructions a line (start-up included), one per line of output
measure() {
    local r
    for r in $(seq 1 "$1"); do
        LINES=$lines RUNS=1 OUT="$TMP/cg" "$SCRIPTS/callgrind_line.sh" "$BIN" > "$TMP/log" 2>&1 ||
            { cat "$TMP/log" >&2; echo "callgrind_check.sh: callgrind_line.sh failed" >&2; exit 2; }
        awk -v n="$lines" '/^summary:/ { printf "%.0f\n", $2 / n; exit }' "$TMP/cg/run1.out"
    done
}

start=$(date +%s)
if [ "$record" = 1 ]; then
    counts=$(measure "${RECORD_RUNS:-3}")
    echo "callgrind_check.sh: runs: $(echo $counts)" >&2
    "$PYTHON" - "$FILE" "${MARGIN:-0.02}" "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
        "$("$BIN" --version)" $counts <<'PY'
import json, math, sys, datetime
path, margin, commit, version, *counts = sys.argv[1:]
data = json.load(open(path))
measured = max(int(c) for c in counts)
data["measured"] = measured
data["runs"] = [int(c) for c in counts]
data["margin"] = float(margin)
data["threshold"] = math.ceil(measured * (1 + float(margin)))
data["recorded"] = f"{datetime.date.today()}, commit {commit}, {version}"
with open(path, "w") as f:
    json.dump(data, f, indent=2, ensure_ascii=False)
    f.write("\n")
print(f"recorded: measured {measured} instructions a line, threshold {data['threshold']}")
PY
    exit 0
fi

threshold=$(field threshold)
measured=$(field measured)
got=$(measure 1)
secs=$(( $(date +%s) - start ))
awk -v g="$got" -v t="$threshold" -v m="$measured" -v n="$lines" -v s="$secs" 'BEGIN {
    printf "bench-check: %d instructions a line (%d lines, start-up included; recorded %d, threshold %d: %+.2f%% of recorded) in %d s\n",
        g, n, m, t, (g - m) * 100 / m, s }'
if [ "$got" -gt "$threshold" ]; then
    echo "bench-check: over the threshold in Benchmarks/Thresholds/instructions-per-line.json:" \
        "find the cost (callgrind_annotate --inclusive=no on make bench-callgrind's profile) or," \
        "if it is accepted, re-record with Benchmarks/scripts/callgrind_check.sh --record and say why" >&2
    exit 1
fi
