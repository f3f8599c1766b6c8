#!/usr/bin/env bash
# `badgeflow report` at scale (issue 46): a support desk's day of LINES lines over ACCOUNTS
# accounts (Scripts/report_day.py; default 1,000,000 and 100,000). Times `filter` and `report`
# on the same input in the same run (the ratio is what counts on a shared machine), prints
# the page's weight, opens it in headless Chromium (wall time of the whole browser run, and
# the page's own script-ready time, data-ready-ms), and checks the DOM against the filter's
# results with Scripts/report_check.py, a searched account included. A measurement, not a test.
# usage: Scripts/report-scale.sh [BADGEFLOW] [LINES] [ACCOUNTS]   (default .build/release/badgeflow)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/release/badgeflow}
LINES=${2:-1000000}
ACCOUNTS=${3:-100000}
CHROMIUM=${CHROMIUM:-chromium}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
python3 Scripts/report_day.py "$ACCOUNTS" "$LINES" > "$work/day.ndjson"
echo "input: $LINES lines, $ACCOUNTS accounts, $(stat -c %s "$work/day.ndjson") bytes"
# Twice each, alternating, with wall and CPU (user+sys) seconds: on a shared machine the
# wall times move with the load, the CPU seconds much less (report is one thread, filter
# analyses on every core).
run() { # NAME CMD...: prints "NAME wall W s, cpu C s"
  local name=$1; shift
  python3 - "$@" <<'PY' | sed "s/^/$name /"
import os, resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
wall = time.monotonic() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"wall {wall:.2f} s, cpu {u.ru_utime + u.ru_stime:.2f} s")
PY
}
for round in 1 2; do
  f=$(run filter "$BIN" filter "$work/day.ndjson")
  r=$(run report "$BIN" report -o "$work/report.html" "$work/day.ndjson")
  fw=$(echo "$f" | awk '{print $3}'); rw=$(echo "$r" | awk '{print $3}')
  echo "round $round: $f; $r; wall ratio $(echo "scale=2; $rw / $fw" | bc -l); load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
printf 'page: %d bytes (%.2f MB)\n' "$(stat -c %s "$work/report.html")" "$(echo "$(stat -c %s "$work/report.html") / 1000000" | bc -l)"
"$BIN" filter --state "$work/state.json" "$work/day.ndjson" > "$work/results.ndjson"
"$BIN" state info "$work/state.json" > "$work/info.txt"
browse() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$work/profile" --enable-logging=stderr --v=0 "$@"
}
# A warm-up run (Chromium's first start reads its own files), then the measured ones; an
# empty page first, for what starting Chromium and dumping a DOM cost without the report.
browse --dump-dom "file://$work/report.html" > /dev/null 2>&1 || true
echo '<!DOCTYPE html><title>t</title>' > "$work/empty.html"
t0=$(now); browse --dump-dom "file://$work/empty.html" > /dev/null 2>&1; t1=$(now)
printf 'chromium on an empty page: %.2f s wall (load average: %s)\n' "$(echo "$t1 - $t0" | bc -l)" "$(cut -d' ' -f1-3 /proc/loadavg)"
for run in 1 2 3; do
  t0=$(now); browse --dump-dom "file://$work/report.html" > "$work/dom.html" 2> "$work/browser.log"; t1=$(now)
  printf 'chromium run %d: %.2f s wall (start, load, script, DOM dump), script ready at %s ms\n' "$run" \
    "$(echo "$t1 - $t0" | bc -l)" "$(grep -o 'data-ready-ms="[0-9]*"' "$work/dom.html" | grep -o '[0-9]*')"
done
if grep -q CONSOLE "$work/browser.log"; then grep CONSOLE "$work/browser.log" >&2; exit 1; fi
target=$(python3 Scripts/report_check.py --pick "$work/dom.html")
text=${target%%$'\t'*} account=${target#*$'\t'}
t0=$(now)
browse --dump-dom "file://$work/report.html#filter=$text" > "$work/dom.html" 2> "$work/browser.log"
t1=$(now)
printf 'chromium with a search (#filter=%s): %.2f s wall, script ready (index searched) at %s ms\n' "$text" \
  "$(echo "$t1 - $t0" | bc -l)" "$(grep -o 'data-ready-ms="[0-9]*"' "$work/dom.html" | grep -o '[0-9]*')"
Scripts/report_check.py "$work/dom.html" "$work/results.ndjson" "$work/state.json" "$work/info.txt" "$work/day.ndjson" \
  --filter "$text" --search "$text" "$account"
