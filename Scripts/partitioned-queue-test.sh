#!/usr/bin/env bash
# A partitioned queue (RunningAsAService, "A partitioned queue"): P consumers, each
# `badgeflow filter --numbered --resume --state part-K.sqlite` on the lines of its partition
# (crc32 of the line's account, else device, modulo P: §8, as Integrations/spark and `state
# split` place accounts), each fed through a pipe, killed with SIGKILL mid-stream and resumed
# on its own from an earlier offset (an at-least-once queue delivers again). Then the parts
# are merged and split again into another number of partitions (`state merge`, `state
# split`) and a second half of the queue goes the same way. Checked:
#   - every re-sent answer (same seq) is byte-identical to the first;
#   - the answers merged by seq are byte for byte one run's over the whole queue;
#   - the final parts merged hold every account as that one run's state does.
# Usage: Scripts/partitioned-queue-test.sh [BADGEFLOW]   (default .build/debug/badgeflow)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/debug/badgeflow}
[ -x "$BIN" ] || swift build --product badgeflow >/dev/null
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
W=$(mktemp -d "${TMPDIR:-/tmp}/badgeflow-pq.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  [ -n "${KEEP:-}" ] && echo "kept $W" >&2 || rm -rf "$W"
}
trap cleanup EXIT
fail() { echo "partitioned-queue-test: FAIL: $*" >&2; exit 1; }

# The queue: 6,000 messages over 40 accounts (2 devices each) and 6 account-less devices,
# every line with `at`; message N is line N (the queue offset).
python3 - "$W/queue.ndjson" <<'PY'
import json, random, sys
r = random.Random(48)
with open(sys.argv[1], "w") as out:
    for i in range(1, 6001):
        if r.random() < 0.1:
            line = {"op": "tick", "device": "loose%d" % r.randrange(6), "at": i}
        else:
            a = r.randrange(40)
            line = {"account": "acct-%d" % a, "device": "acct-%d-%s" % (a, r.choice(["phone", "pad"])), "at": i}
            k = r.random()
            if k < 0.55:
                line.update(op="push", payload={"aps": {"alert": "m%d" % i, "thread-id": "t%d" % r.randrange(5)}})
            elif k < 0.85:
                line.update(op="clear", path="root.chat.t%d" % r.randrange(5))
            else:
                line.update(op=r.choice(["foreground", "background", "snapshot"]))
        out.write(json.dumps(line, separators=(",", ":")) + "\n")
PY
awk '{ printf "%d\t%s\n", NR, $0 }' "$W/queue.ndjson" > "$W/numbered.ndjson"

# One consumer over the whole queue: the reference.
"$BIN" filter --numbered --state "$W/one.sqlite" < "$W/numbered.ndjson" > "$W/one.out"

# part FROM TO P DIR: the numbered lines FROM..TO of partition K into DIR/q-K for K < P.
part() {
  python3 - "$W/numbered.ndjson" "$1" "$2" "$3" "$4" <<'PY'
import json, sys, zlib
src, lo, hi, parts, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
files = [open("%s/q-%d" % (out, k), "w") for k in range(parts)]
for raw in open(src):
    n, text = raw.rstrip("\n").split("\t", 1)
    if not lo <= int(n) <= hi:
        continue
    obj = json.loads(text)
    key = obj.get("account") if isinstance(obj.get("account"), str) else obj.get("device", "")
    files[zlib.crc32(key.encode("utf-8")) % parts].write(raw)
PY
}

# seq_of STATE: the state's committed seq (0 for a new one).
seq_of() {
  "$BIN" state info --json "$1" 2>/dev/null | python3 -c '
import json, sys
text = sys.stdin.read()
print((json.loads(text)["seq"] or 0) if text else 0)'
}

# consume DIR K: partition K's consumer on DIR/part-0000K.sqlite: the first half of its lines
# through a pipe, a wait for their checkpoint, a quarter more, a SIGKILL as soon as their
# answers are out; then a second consumer fed the partition's lines from the start resumes.
consume() {
  local dir=$1 k=$2 state q out lines half more
  state=$(printf '%s/part-%05d.sqlite' "$dir" "$k")
  q="$dir/q-$k" out="$dir/out-$k"
  lines=$(wc -l < "$q") half=$((lines / 2)) more=$((lines * 3 / 4))
  mkfifo "$dir/fifo-$k"
  "$BIN" filter --numbered --resume --checkpoint 1 --state "$state" < "$dir/fifo-$k" > "$out" 2> "$dir/err-$k" &
  local filter=$!
  pids+=("$filter")
  exec {feed}> "$dir/fifo-$k"
  head -n "$half" "$q" >&"$feed"
  local last
  last=$(sed -n "${half}p" "$q" | cut -f1)
  for _ in $(seq 1 300); do [ "$(seq_of "$state")" -ge "$last" ] && break; sleep 0.05; done
  [ "$(seq_of "$state")" -ge "$last" ] || fail "partition $k: no checkpoint at seq $last within 15 s"
  sed -n "$((half + 1)),${more}p" "$q" >&"$feed"
  for _ in $(seq 1 300); do [ "$(wc -l < "$out")" -ge "$more" ] && break; sleep 0.02; done
  kill -9 "$filter"
  wait "$filter" 2>/dev/null || true
  exec {feed}>&-
  rm "$dir/fifo-$k"
  local committed answered
  committed=$(seq_of "$state") answered=$(wc -l < "$out")
  # Resumed: the queue delivers the partition again from its first line.
  "$BIN" filter --numbered --resume --checkpoint 1 --state "$state" < "$q" >> "$out" 2>> "$dir/err-$k"
  echo "  partition $k: $lines lines, killed after $answered answers with seq $committed committed; $(($(wc -l < "$out") - lines)) answers re-sent"
}

H=3000
mkdir -p "$W/a" "$W/b"
echo "first half (lines 1-$H): 3 partitions"
# The parts start as a split of an empty state (each records P, its index and the hash).
"$BIN" filter --numbered --state "$W/empty.sqlite" < /dev/null
"$BIN" state split "$W/empty.sqlite" --parts 3 "$W/a" > /dev/null
part 1 "$H" 3 "$W/a"
for k in 0 1 2; do consume "$W/a" "$k"; done
# Re-partition between runs: 3 parts -> one state -> 2 parts.
"$BIN" state merge "$W/merged.sqlite" "$W"/a/part-*.sqlite > /dev/null
"$BIN" state split "$W/merged.sqlite" --parts 2 "$W/b" > /dev/null
[ "$(seq_of "$W/b/part-00000.sqlite")" -eq "$H" ] || fail "a split part's seq is $(seq_of "$W/b/part-00000.sqlite"), not $H"
echo "second half (lines $((H + 1))-6000): 2 partitions (state merge, then state split --parts 2)"
part $((H + 1)) 6000 2 "$W/b"
for k in 0 1; do consume "$W/b" "$k"; done

# The sender's view: each seq once; a re-sent answer must be byte-identical.
cat "$W"/a/out-* "$W"/b/out-* | python3 -c '
import sys
seen = {}
resent = 0
for line in sys.stdin.buffer:
    seq = int(line[7:line.index(b",", 7)])
    if seq in seen:
        resent += 1
        if seen[seq] != line:
            sys.exit("seq %d answered twice with different bytes:\n%r\n%r" % (seq, seen[seq], line))
    else:
        seen[seq] = line
sys.stdout.buffer.write(b"".join(seen[s] for s in sorted(seen)))
print("  %d answers re-sent, each byte-identical to the first" % resent, file=sys.stderr)
' > "$W/merged.out"
cmp "$W/merged.out" "$W/one.out" || fail "the partitions' answers merged by seq differ from one run's"
echo "  $(wc -l < "$W/merged.out") answers merged by seq: byte for byte one run's"

"$BIN" state merge "$W/final.sqlite" "$W"/b/part-*.sqlite > /dev/null
"$BIN" state convert "$W/final.sqlite" "$W/final.json" > /dev/null
"$BIN" state convert "$W/one.sqlite" "$W/one.json" > /dev/null
python3 - "$W/final.json" "$W/one.json" <<'PY' || fail "the merged parts' accounts differ from one run's state"
import json, sys
a, b = (json.load(open(p))["accounts"] for p in sys.argv[1:])
if a != b:
    diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    sys.exit("accounts differ: %s" % diff[:5])
print("  final parts merged: %d accounts, as one run's state" % len(a))
PY
echo "partitioned-queue-test: ok"
