#!/usr/bin/env bash
# callgrind_line.sh [BIN] -- instructions a line of `badgeflow filter --jobs 1` under callgrind.
#
# Generates the bench stream (gen_stream.py LINES --seed 1, cached in Benchmarks/.data/ as
# bench.sh caches it), runs BIN (default <repo>/.build/release/badgeflow) on it once without
# valgrind for the reference output, then RUNS times under callgrind with
# SWIFT_DETERMINISTIC_HASHING=1, checking that each run's output has the reference's md5. The
# start-up is counted by one more callgrind run with stdin from /dev/null. Prints each run's
# total, the start-up count, and the per-line figures with and without start-up. json-c seeds
# its hash per process, so totals move by up to ~0.2k a line between runs: compare builds by
# several runs and by their functions' own counts (callgrind_annotate --inclusive=no on the
# kept profile, printed last).
#
# Env: LINES (default 100000), RUNS (default 2), PYTHON, OUT (folder for the profiles, default
# Benchmarks/.data/callgrind). Installs valgrind (Debian) when it is missing. Never builds Swift.
set -euo pipefail

SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SCRIPTS/../.." && pwd)
DATA="$ROOT/Benchmarks/.data"
LINES=${LINES:-100000}
RUNS=${RUNS:-2}
PYTHON=${PYTHON:-python3}
OUT=${OUT:-$DATA/callgrind}

case ${1:-} in
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
[ $# -le 1 ] || { echo "callgrind_line.sh: at most one argument, the binary" >&2; exit 2; }
BIN=${1:-$ROOT/.build/release/badgeflow}
[ -x "$BIN" ] || { echo "callgrind_line.sh: not an executable: $BIN (make it with swift build -c release)" >&2; exit 2; }
[[ $LINES =~ ^[1-9][0-9]*$ ]] || { echo "callgrind_line.sh: LINES must be a positive integer" >&2; exit 2; }
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "callgrind_line.sh: RUNS must be a positive integer" >&2; exit 2; }

if ! command -v valgrind >/dev/null 2>&1; then
    echo "callgrind_line.sh: installing valgrind" >&2
    SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq valgrind >/dev/null
fi

mkdir -p "$DATA" "$OUT"
[ -f "$DATA/.gitignore" ] || printf '*\n' > "$DATA/.gitignore"
STREAM="$DATA/gen_stream_$LINES.ndjson"
if [ ! -s "$STREAM" ] || [ "$SCRIPTS/gen_stream.py" -nt "$STREAM" ]; then
    echo "generating $STREAM" >&2
    "$PYTHON" "$SCRIPTS/gen_stream.py" "$LINES" --seed 1 > "$STREAM.tmp"
    mv "$STREAM.tmp" "$STREAM"
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# total FILE -> the profile's instruction count (callgrind's "summary:" line)
total() { awk '/^summary:/ { print $2; exit }' "$1"; }

"$BIN" filter --jobs 1 < "$STREAM" > "$TMP/reference.ndjson"
want=$(md5sum < "$TMP/reference.ndjson" | cut -d' ' -f1)

callgrind() { # OUTFILE STDIN STDOUT
    SWIFT_DETERMINISTIC_HASHING=1 valgrind -q --tool=callgrind --callgrind-out-file="$1" \
        "$BIN" filter --jobs 1 < "$2" > "$3"
}

callgrind "$OUT/startup.out" /dev/null "$TMP/startup.ndjson"
startup=$(total "$OUT/startup.out")
[ -s "$TMP/startup.ndjson" ] && { echo "callgrind_line.sh: output from an empty stream" >&2; exit 1; }

echo "badgeflow filter --jobs 1, $LINES lines of gen_stream.py --seed 1 ($BIN)"
echo "output md5 $want (the same binary without valgrind)"
awk -v s="$startup" 'BEGIN { printf "start-up (< /dev/null): %.1fM instructions\n", s / 1e6 }'
for r in $(seq 1 "$RUNS"); do
    callgrind "$OUT/run$r.out" "$STREAM" "$TMP/out.ndjson"
    got=$(md5sum < "$TMP/out.ndjson" | cut -d' ' -f1)
    if [ "$got" != "$want" ]; then
        echo "callgrind_line.sh: run $r: output md5 $got, without valgrind $want" >&2
        exit 1
    fi
    t=$(total "$OUT/run$r.out")
    awk -v r="$r" -v t="$t" -v s="$startup" -v n="$LINES" 'BEGIN {
        printf "run %d: %.1fM instructions, %.2fk a line, %.2fk a line without start-up\n",
            r, t / 1e6, t / n / 1e3, (t - s) / n / 1e3 }'
done
echo "profiles: $OUT/run1.out .. run$RUNS.out, $OUT/startup.out (callgrind_annotate --inclusive=no FILE)"
