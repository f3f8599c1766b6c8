#!/usr/bin/env bash
# `badgeflow report` in a real browser (issues 28, 46): headless Chromium opens the report of each
# scenario fixture and of generated days, at #filter=ID (the filter box's script must run),
# with no console message at all, and Scripts/report_check.py compares the figures it reads
# back from the DOM (data-metric, data-account) with what `badgeflow filter` wrote for the
# same input and the state it saved; then it opens the page again searching the index for
# an account not shown in detail and checks what the search lists.
# usage: Scripts/report-browser-test.sh [BADGEFLOW]   (default .build/debug/badgeflow)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/debug/badgeflow}
CHROMIUM=${CHROMIUM:-chromium}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Chromium as a headless test browser: no sandbox (CI runs as root), no GPU, no profile kept.
browse() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$work/profile" --enable-logging=stderr --v=0 "$@"
}

check() { # NAME INPUT [RULES]
  local name=$1 input=$2 rules=${3:-}
  local args=()
  [ -n "$rules" ] && args=(--rules "$rules")
  rm -f "$work/state.json"
  "$BIN" filter "${args[@]}" --state "$work/state.json" "$input" > "$work/results.ndjson"
  "$BIN" state info "$work/state.json" > "$work/info.txt"
  "$BIN" report "${args[@]}" -o "$work/report.html" "$input" 2> /dev/null
  # The first shown account (its id as text), for #filter=.
  local first
  first=$(python3 -c 'import re,sys,html; m=re.search(r"data-account=\"([^\"]*)\"", open(sys.argv[1]).read()); print(html.unescape(m.group(1)) if m else "")' "$work/report.html")
  local url="file://$work/report.html"
  [ -n "$first" ] && url="$url#filter=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$first")"
  browse --dump-dom "$url" > "$work/dom.html" 2> "$work/browser.log"
  opened "$name"
  printf '%s: ' "$name"
  Scripts/report_check.py "$work/dom.html" "$work/results.ndjson" "$work/state.json" "$work/info.txt" "$input" ${first:+--filter "$first"}
  # Search the index (issue 46) for an account not shown in detail, by a device only it has
  # (else by its id), as a support engineer would: the page must list it with its command.
  local target
  target=$(python3 Scripts/report_check.py --pick "$work/dom.html")
  if [ -n "$target" ]; then
    local text=${target%%$'\t'*} account=${target#*$'\t'}
    browse --dump-dom "file://$work/report.html#filter=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$text")" > "$work/dom.html" 2> "$work/browser.log"
    opened "$name (search)"
    printf '%s, searched: ' "$name"
    Scripts/report_check.py "$work/dom.html" "$work/results.ndjson" "$work/state.json" "$work/info.txt" "$input" --filter "$text" --search "$text" "$account"
  fi
}

opened() { # NAME: the page wrote nothing to the console and Chromium gave a DOM
  if grep -q 'CONSOLE' "$work/browser.log"; then
    echo "report-browser-test: $1: the page wrote to the console:" >&2
    grep 'CONSOLE' "$work/browser.log" >&2
    exit 1
  fi
  if [ ! -s "$work/dom.html" ]; then
    echo "report-browser-test: $1: Chromium gave no DOM" >&2
    tail -n 20 "$work/browser.log" >&2
    exit 1
  fi
}

n=0
for f in Fixtures/scenarios/*.ndjson; do
  case $f in *.expected.ndjson) continue ;; esac
  rules=${f%.ndjson}.rules.json
  [ -f "$rules" ] || rules=
  check "$(basename "$f")" "$f" "$rules"
  n=$((n + 1))
done
# A generated day: 2,000 accounts with 1-3 devices, 30,000 lines (the fleet generator).
python3 Benchmarks/scripts/gen_fleet.py 2000 30000 > "$work/day.ndjson"
check "generated day (2,000 accounts, 30,000 lines)" "$work/day.ndjson"
n=$((n + 1))
# A support desk's day: 5,000 accounts, 60,000 lines with duplicates, rejected lines and
# devices that leave while showing a number (Scripts/report_day.py).
python3 Scripts/report_day.py 5000 60000 > "$work/support.ndjson"
check "support day (5,000 accounts, 60,000 lines)" "$work/support.ndjson"
n=$((n + 1))
echo "report-browser-test: $n reports checked in $("$CHROMIUM" --version 2>/dev/null | head -n 1)"
