#!/usr/bin/env bash
# make spark-test: the job's driver and task code without Spark (test_badgeflow_spark.py), then
# partitioned runs on Spark that must merge into exactly the bytes of one `badgeflow filter`
# run: the quick start of Integrations/spark/README.md as written (local[2]); then, through run() on one
# SparkSession (local[2,3]), a file and a directory of files created out of name order with a
# BOM, CRLF, invalid UTF-8, a gzip file and an empty one (--merge none, the parts merged with
# sort -m), and the same again over that OUTPUT with overwrite, --merge spark and --compress
# gzip. Every summary.json is checked against a recount of the results (and against jq). Both
# streams hold ttl marks and fleet-wide expire lines (EventLines article), which every partition answers
# for its own accounts and the job combines into one line per seq (EXPIRE_EVERY=0: none in the
# main stream). Then a chained two-day run on the same session: day 1 with --state-out, day 2
# with --state-in from it (P=4: the folder; P=8: a merged file split on the driver), both days'
# results and the `state merge`d final state compared byte for byte with one `filter --state`
# chain; and a state of 4 parts refused for --partitions 8 (CHAIN_LINES=4000 lines a day).
# Then three chained days with file:// URIs for --state-in and --state-out (Hadoop's
# FileSystem API), with JSON, SQLite and RocksDB parts, each day's results and the final state
# against one `filter --state` chain, and day 3 again refused on the driver; a run whose task
# fails (a part cut short) prints one line of cause before any trace and leaves nothing in the
# temporary folder (a killed run's leftovers swept); gzip bytes named .ndjson are exit 4.
# Installs Java and PySpark when missing.
#   LINES=200000 SEED=15 ALL_AT=1 EXPIRE_EVERY=400 PROFILE=1 Integrations/spark/spark_test.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
LINES=${LINES:-200000}
SEED=${SEED:-15}
EXPIRE_EVERY=${EXPIRE_EVERY:-400}
GEN_ARGS=(--lines "$LINES" --seed "$SEED" --expire-every "$EXPIRE_EVERY")
AT_ARG=(); [ "${ALL_AT:-0}" = 1 ] && AT_ARG=(--all-at)
GEN_ARGS+=("${AT_ARG[@]}")
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
T0=$(now)

t=$(now)
if ! command -v java >/dev/null 2>&1; then
  echo "spark-test: installing openjdk-17-jre-headless"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi
if ! python3 -c 'import pyspark' 2>/dev/null; then
  echo "spark-test: installing pyspark"
  python3 -m pip install -q 'pyspark>=4,<5'
fi
echo "spark-test: java and pyspark ready ($(secs "$t" "$(now)") s; pyspark $(python3 -c 'import pyspark; print(pyspark.__version__)'))"

swift build -c release --product badgeflow >/dev/null
BIN=$PWD/.build/release/badgeflow
WORK=$(mktemp -d "${TMPDIR:-/tmp}/badgeflow-spark.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
status=0
fail() { echo "spark-test: FAIL: $*"; status=1; }

# 1. Driver and task code, no Spark: every safety item that can be tested without a cluster.
t=$(now)
if BADGEFLOW=$BIN python3 -W error::ResourceWarning -m unittest Integrations/spark/test_badgeflow_spark.py > "$WORK/unit.log" 2>&1; then
  echo "spark-test: $(grep -E '^Ran ' "$WORK/unit.log") without Spark: OK ($(secs "$t" "$(now)") s)"
else
  cat "$WORK/unit.log"
  fail "test_badgeflow_spark.py"
fi

# What jq says of a results file: the fields of summary.json that come from the results.
JQ_SUMMARY='{results: length,
  errors: (map(select(.error) | .error.code) | group_by(.) | map({key: .[0], value: length}) | from_entries),
  decrements: ([.[] | (., (select(.op == "expire") | .accounts[])) | select(.decrement)] | length),
  decrementTotal: ([.[] | (., (select(.op == "expire") | .accounts[])) | .decrement.by // 0] | add // 0),
  badgeUpdates: ([.[] | (., (select(.op == "expire") | .accounts[])) | (.badgeUpdates // []) | length] | add // 0),
  stampedPayloads: (map(select(has("payload"))) | length)}'
# The summary a recount of every result line gives (and jq, when installed), against OUTPUT/summary.json.
check_summary() { # OUTPUT RESULTS-FILE
  local summary=$1/summary.json results=$2
  if ! python3 - "$summary" "$results" <<'EOF'
import json, sys
sys.path.insert(0, "Integrations/spark")
from test_badgeflow_spark import recount
summary = json.load(open(sys.argv[1]))
with open(sys.argv[2], "rb") as f:
    want = recount(f)
got = {k: summary[k] for k in want}
if got != want:
    sys.exit("summary.json %s\nrecount      %s" % (got, want))
EOF
  then fail "$summary differs from a recount of $results"; return; fi
  if command -v jq >/dev/null 2>&1; then
    local by_jq
    by_jq=$(jq -s -c "$JQ_SUMMARY" "$results")
    if [ "$by_jq" != "$(jq -c '{results, errors, decrements, decrementTotal, badgeUpdates, stampedPayloads}' "$summary")" ]; then
      fail "$summary differs from jq over $results: $by_jq"; return
    fi
  fi
  echo "spark-test: $summary equals a recount of the results${by_jq:+ and jq}: $(jq -c '{lines, results, errors: (.errors | length), decrements, decrementTotal, badgeUpdates, stampedPayloads}' "$summary" 2>/dev/null || true)"
}

python3 Integrations/spark/gen_stream.py "${GEN_ARGS[@]}" > "$WORK/events.ndjson"
echo "spark-test: stream ${GEN_ARGS[*]}: $(wc -l < "$WORK/events.ndjson") lines, $(wc -c < "$WORK/events.ndjson") bytes"
t=$(now)
"$BIN" filter --stamp "$WORK/events.ndjson" > "$WORK/single.ndjson"
single=$(secs "$t" "$(now)")
n=$(wc -l < "$WORK/single.ndjson")
echo "spark-test: of which $(grep -c '^{"seq":[0-9]*,"op":"expire"' "$WORK/single.ndjson" || true) fleet-wide expire results, $(grep -c '"op":"expire".*"accounts":\[{' "$WORK/single.ndjson" || true) with accounts"
echo "spark-test: one badgeflow filter --stamp run: $n result lines in $single s ($(awk -v n="$n" -v s="$single" 'BEGIN { printf "%d", n / s }') lines/s)"

# 2. The Spark README's quick start, as written: events.ndjson and /tmp/replay are this run's.
awk '/^Running locally/ { f = 1 } f && /^```sh$/ { g = 1; next } g && /^```$/ { exit } g' Integrations/spark/README.md \
  | sed -e "s#events\\.ndjson#$WORK/events.ndjson#g" -e "s#/tmp/replay#$WORK/replay#g" > "$WORK/readme.sh"
grep -q 'badgeflow_spark.py' "$WORK/readme.sh" || fail "no example command found in Integrations/spark/README.md"
[ -n "${PROFILE:-}" ] && sed -i 's#--filter-args#--profile --filter-args#' "$WORK/readme.sh"
t=$(now)
if bash -euo pipefail "$WORK/readme.sh" > "$WORK/readme.log" 2>&1; then
  spark=$(secs "$t" "$(now)")
  grep '^badgeflow_spark:' "$WORK/readme.log" | sed 's/^/spark-test: /'
  m=$(wc -l < "$WORK/replay/merged/part-00000")
  echo "spark-test: the Spark README's quick start (local[2], 4 partitions, --filter-args --stamp): $m result lines in $spark s, byte-identical to one run (its cmp)"
  [ -e "$WORK/replay/parts" ] && fail "the merged file and the parts both kept without --keep-parts"
  check_summary "$WORK/replay" "$WORK/single.ndjson"
else
  tail -40 "$WORK/readme.log"
  fail "the Spark README's quick start command lines"
fi

# 3. A file with a BOM, CRLF, a lone CR and no final newline, then a directory of hourly files
# created in another order than their names' (one with invalid UTF-8, one gzip, one empty).
E=$WORK/edge
mkdir -p "$E/day"
printf '\xef\xbb\xbf{"op":"login","device":"x","at":1}\r\n{"op":"tick",\r"device":"x","at":2}\r\n\r\n{"op":"push","device":"y","at":3,"payload":{"aps":{"alert":"a","thread-id":"t"}}}' > "$E/a.ndjson"
for h in 07 19 00 23 12 03 16 09 21 05 14 01 18 10 22 04 13 08 20 02 17 11 15 06; do
  python3 Integrations/spark/gen_stream.py --lines 300 --seed "1$h" --accounts 5 --devices 12 "${AT_ARG[@]}" > "$E/day/hour-$h.ndjson"
done
# An hour with ttl marks and fleet-wide expire lines (one with a bad `at`).
python3 Integrations/spark/gen_stream.py --lines 1000 --seed 99 --accounts 60 --devices 200 --expire-every 30 "${AT_ARG[@]}" >> "$E/day/hour-14.ndjson"
printf '{"op":"expire","at":"later"}\n{"op":"expire","at":1700000300}\n' >> "$E/day/hour-14.ndjson"
printf '{"op":"login","account":"acct-1","device":"\xff\xfe","at":1}\n{"op":"set","account":"acct-1","device":"x","path":"root.inbox","count":2,"at":9}\n' >> "$E/day/hour-05.ndjson"
: > "$E/day/hour-12.ndjson"
gzip "$E/day/hour-06.ndjson"   # Spark decompresses it; one run reads it through zcat
one=("$E/a.ndjson")
for f in $(printf '%s\n' "$E"/day/hour-* | LC_ALL=C sort); do
  case $f in *.gz) zcat "$f" > "$E/${f##*/}.txt"; one+=("$E/${f##*/}.txt");; *) one+=("$f");; esac
done
"$BIN" filter "${one[@]}" > "$E/single.ndjson"
grep -q '"op":"expire".*"accounts":\[{"account":".*},{"account":"' "$E/single.ndjson" \
  || fail "the edge input has no expire result with two accounts"
first=$(ls -U "$E/day" | awk 'NR <= 3' | tr '\n' ' ')

# Two days for a chained run: day 1 then day 2 through one `filter --state` chain here, and
# through the job on the API's session below, with --state-out then --state-in (P=4: a folder
# of parts; P=8: day 1's parts merged into one file, split again on the driver).
C=$WORK/chain
mkdir -p "$C"
python3 Integrations/spark/gen_stream.py --lines "${CHAIN_LINES:-4000}" --seed 31 --accounts 300 --devices 900 --expire-every 300 "${AT_ARG[@]}" > "$C/day1.ndjson"
python3 Integrations/spark/gen_stream.py --lines "${CHAIN_LINES:-4000}" --seed 32 --accounts 300 --devices 900 --expire-every 300 "${AT_ARG[@]}" > "$C/day2.ndjson"
t=$(now)
"$BIN" filter --state "$C/one.json" "$C/day1.ndjson" > "$C/one1.ndjson"
"$BIN" filter --state "$C/one.json" "$C/day2.ndjson" > "$C/one2.ndjson"
chain_one=$(secs "$t" "$(now)")
"$BIN" filter --state "$C/one.sqlite" "$C/day1.ndjson" > /dev/null
"$BIN" filter --state "$C/one.sqlite" "$C/day2.ndjson" > /dev/null
# Three days for the chain with file:// URIs, JSON, SQLite and RocksDB parts (section 6).
python3 Integrations/spark/gen_stream.py --lines "${CHAIN_LINES:-4000}" --seed 33 --accounts 300 --devices 900 --expire-every 300 "${AT_ARG[@]}" > "$C/day3.ndjson"
for fmt in json sqlite rocksdb; do
  for d in 1 2 3; do "$BIN" filter --state "$C/one3.$fmt" "$C/day$d.ndjson" > "$C/one3-$fmt-$d.ndjson"; done
done
# A state as JSON without its records of inputs applied (names and times differ between a
# filter that read the files and the job's tasks, which read stdin): the rest byte for byte.
strip_records() { python3 -c 'import re, sys; sys.stdout.write(re.sub(r"\n  \"inputs\": \[\n.*?\n  \],", "", re.sub(r"\n  \"offset\": \"numbered\",", "", open(sys.argv[1]).read()), flags=re.S))' "$1"; }
# 3 and 4 through the API, on one SparkSession that must still run after both: --merge none
# (kept as out-none), a refusal without overwrite, then overwrite=True with --merge spark and
# --compress gzip over the same OUTPUT; then the chained two-day runs (5).
t=$(now)
if ! python3 - "$E" "$BIN" "$C" > "$E/api.log" 2>&1 <<'EOF'
import shutil, subprocess, sys, time
sys.path.insert(0, "Integrations/spark")
import badgeflow_spark as job
from pyspark.sql import SparkSession
E, BIN, C = sys.argv[1:4]
spark = (SparkSession.builder.master("local[2,3]").appName("badgeflow-spark-test")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
spark.sparkContext.setLogLevel("WARN")
inputs = [E + "/a.ndjson", E + "/day"]
job.run(spark, inputs, E + "/out", badgeflow=BIN, partitions=3, merge="none")
shutil.copytree(E + "/out", E + "/out-none")
try:
    job.run(spark, inputs, E + "/out", badgeflow=BIN, partitions=3)
    sys.exit("an existing OUTPUT was not refused without overwrite")
except job.JobError as e:
    print("refused: %s" % e)
summary = job.run(spark, inputs, E + "/out", badgeflow=BIN, partitions=3, merge="spark", compress="gzip",
                  overwrite=True)
assert spark.range(5).count() == 5, "the session no longer runs"
print("session still running; summary results %d" % summary["results"])
for p in (4, 8):
    started = time.time()
    job.run(spark, C + "/day1.ndjson", "%s/out1-%d" % (C, p), badgeflow=BIN, partitions=p,
            state_out="%s/state1-%d" % (C, p))
    if p == 4:
        state_in = "%s/state1-%d" % (C, p)
    else:
        state_in = "%s/merged1-%d.json" % (C, p)
        subprocess.run([BIN, "state", "merge", state_in] + ["%s/state1-%d/part-%05d.json" % (C, p, i) for i in range(p)],
                       check=True)
    job.run(spark, C + "/day2.ndjson", "%s/out2-%d" % (C, p), badgeflow=BIN, partitions=p, state_in=state_in,
            state_out="%s/state2-%d" % (C, p))
    print("P=%d: two days in %.2f s" % (p, time.time() - started))
# SQLite parts: from empty parts of --state-format sqlite, then day 1's parts.
started = time.time()
job.run(spark, C + "/day1.ndjson", C + "/out1-sq", badgeflow=BIN, partitions=4, state_out=C + "/state1-sq",
        state_format="sqlite")
job.run(spark, C + "/day2.ndjson", C + "/out2-sq", badgeflow=BIN, state_in=C + "/state1-sq",
        state_out=C + "/state2-sq")
print("P=4 sqlite: two days in %.2f s" % (time.time() - started))
# Three days with file:// URIs for --state-in and --state-out (Hadoop's FileSystem API), JSON,
# SQLite and RocksDB parts; then day 3 again, refused on the driver before any task runs.
for fmt in ("json", "sqlite", "rocksdb"):
    started = time.time()
    prev = None
    for d in (1, 2, 3):
        job.run(spark, C + "/day%d.ndjson" % d, "%s/out3-%s-%d" % (C, fmt, d), badgeflow=BIN,
                partitions=3 if prev is None else None, state_in=prev,
                state_out="file://%s/state3-%s-%d" % (C, fmt, d), state_format=fmt)
        prev = "file://%s/state3-%s-%d" % (C, fmt, d)
    print("3 days %s: %.2f s" % (fmt, time.time() - started))
    try:
        job.run(spark, C + "/day3.ndjson", "%s/again-%s" % (C, fmt), badgeflow=BIN, state_in=prev,
                state_out="file://%s/again-state-%s" % (C, fmt))
        print("day 3 again %s: not refused" % fmt)
    except job.JobError as e:
        print("day 3 again %s: refused: %s" % (fmt, e))
spark.stop()
EOF
then
  tail -40 "$E/api.log"; fail "the runs through the API"
fi
api=$(secs "$t" "$(now)")
grep -q '^session still running' "$E/api.log" && echo "spark-test: run(spark, …) three times on one SparkSession, which still runs after them (with the chained runs below: $api s in all)"
if LC_ALL=C sort -m -s -t: -k2,2n "$E"/out-none/parts/part-* | cmp -s - "$E/single.ndjson"; then
  echo "spark-test: a file, then a directory of 24 files (readdir order: $first…; BOM, CRLF, lone CR, invalid UTF-8, gzip, empty file), --merge none, sort -m of the parts: byte-identical ($(wc -l < "$E/single.ndjson") lines)"
else
  fail "a file and a directory, --merge none: differs from one run"
  LC_ALL=C sort -m -s -t: -k2,2n "$E"/out-none/parts/part-* | diff "$E/single.ndjson" - | head -6 | cut -c1-300 || true
fi
grep -q '"invalid-utf8"' "$E/single.ndjson" || fail "the edge input has no invalid-utf8 line"
[ -e "$E/out-none/merged" ] && fail "--merge none wrote a merged file"
check_summary "$E/out-none" "$E/single.ndjson"
grep -q '^refused: .*exists; pass --overwrite' "$E/api.log" || fail "run() did not refuse an existing OUTPUT"
if [ -f "$E/out/merged/part-00000.gz" ] && zcat "$E/out/merged/part-00000.gz" | cmp -s - "$E/single.ndjson"; then
  echo "spark-test: then overwrite, --merge spark, --compress gzip: byte-identical"
else
  fail "overwrite, --merge spark, --compress gzip: differs from one run"
fi
[ -e "$E/out/parts" ] && fail "overwrite kept the old OUTPUT's parts"
ls -a "$E" | grep -q '^\.out\.badgeflow' && fail "a staging folder was left beside OUTPUT"
check_summary "$E/out" "$E/single.ndjson"
# From the command line, the refusal comes before the JVM starts.
if python3 Integrations/spark/badgeflow_spark.py --input "$E/a.ndjson" --output "$E/out" --badgeflow "$BIN" 2> "$E/refused.log"; then
  fail "an existing OUTPUT was not refused without --overwrite"
elif grep -q 'exists; pass --overwrite' "$E/refused.log" && ! grep -q Spark "$E/refused.log"; then
  echo "spark-test: an existing OUTPUT without --overwrite (command line): refused before the JVM starts"
else
  cat "$E/refused.log"; fail "the refusal of an existing OUTPUT"
fi

# 5. The chained two-day runs (on the API's session, above): both days' results and the
# merged final state (without the records of inputs applied: the parts record each day under
# the job's digests, one run under its file) byte-identical to one `filter --state` chain; then a run whose partition
# count is not the state's P, refused before the JVM starts.
if grep -q '^P=8: two days' "$E/api.log"; then
  for p in 4 8; do
    ok=1
    cmp -s "$C/out1-$p/merged/part-00000" "$C/one1.ndjson" || { fail "chained run P=$p: day 1 results differ"; ok=0; }
    cmp -s "$C/out2-$p/merged/part-00000" "$C/one2.ndjson" || { fail "chained run P=$p: day 2 results differ"; ok=0; }
    "$BIN" state merge "$C/final-$p.json" "$C"/state2-$p/part-*.json || { fail "chained run P=$p: state merge"; ok=0; }
    cmp -s <(strip_records "$C/final-$p.json") <(strip_records "$C/one.json") || { fail "chained run P=$p: the merged final state differs"; ok=0; }
    [ "$ok" = 1 ] && echo "spark-test: chained two days, P=$p ($(grep "^P=$p:" "$E/api.log" | cut -d: -f2- | sed 's/^ //')): both days' results ($(wc -l < "$C/one1.ndjson") + $(wc -l < "$C/one2.ndjson") lines) and the merged final state ($(grep -c '^    "' "$C/one.json") accounts) byte-identical to one filter --state chain"
  done
  ok=1
  cmp -s "$C/out1-sq/merged/part-00000" "$C/one1.ndjson" || { fail "chained run, SQLite parts: day 1 results differ"; ok=0; }
  cmp -s "$C/out2-sq/merged/part-00000" "$C/one2.ndjson" || { fail "chained run, SQLite parts: day 2 results differ"; ok=0; }
  "$BIN" state merge "$C/final-sq.sqlite" "$C"/state2-sq/part-*.sqlite || { fail "chained run, SQLite parts: state merge"; ok=0; }
  "$BIN" state convert "$C/final-sq.sqlite" "$C/final-sq.json" && "$BIN" state convert "$C/one.sqlite" "$C/one-sq.json" \
    && cmp -s <(strip_records "$C/final-sq.json") <(strip_records "$C/one-sq.json") || { fail "chained run, SQLite parts: the merged final state differs"; ok=0; }
  [ "$ok" = 1 ] && echo "spark-test: chained two days, P=4, SQLite parts ($(grep "^P=4 sqlite:" "$E/api.log" | cut -d: -f2- | sed 's/^ //')): both days' results and the merged final state (as JSON) identical to one filter --state one.sqlite chain"
  echo "spark-test: chained two days: one process (filter --state day1, day2) $chain_one s"
  ls -a "$C" | grep -q '^\.state' && fail "a staging folder was left beside --state-out"
else
  fail "the chained two-day runs (see the runs through the API)"
fi
if python3 Integrations/spark/badgeflow_spark.py --input "$C/day2.ndjson" --output "$C/mismatch" --badgeflow "$BIN" \
    --state-in "$C/state1-4" --partitions 8 2> "$C/mismatch.log"; then
  fail "a state of 4 parts was not refused for 8 partitions"
elif grep -q 'is split into 4 parts; this run has 8 partitions' "$C/mismatch.log" && ! grep -q Spark "$C/mismatch.log" && [ ! -e "$C/mismatch" ]; then
  echo "spark-test: a state split into 4 parts with --partitions 8: refused before the JVM starts"
else
  cat "$C/mismatch.log"; fail "the refusal of a mismatched partition count"
fi

# 6. Three chained days with file:// URIs, for each part format: every day's results and the
# merged final state (as JSON, without the records of inputs applied) byte-identical to one
# filter --state chain; day 3 again refused on the driver; nothing left in the temporary folder.
for fmt in json sqlite rocksdb; do
  ok=1
  for d in 1 2 3; do
    cmp -s "$C/out3-$fmt-$d/merged/part-00000" "$C/one3-$fmt-$d.ndjson" || { fail "3-day chain, $fmt parts: day $d results differ"; ok=0; }
  done
  "$BIN" state merge "$C/final3.$fmt" "$C"/state3-$fmt-3/part-* || { fail "3-day chain, $fmt parts: state merge"; ok=0; }
  if [ "$fmt" = json ]; then cp "$C/final3.json" "$C/final3-$fmt.json"; cp "$C/one3.json" "$C/one3-$fmt.json"
  else "$BIN" state convert "$C/final3.$fmt" "$C/final3-$fmt.json" && "$BIN" state convert "$C/one3.$fmt" "$C/one3-$fmt.json" || ok=0; fi
  cmp -s <(strip_records "$C/final3-$fmt.json") <(strip_records "$C/one3-$fmt.json") || { fail "3-day chain, $fmt parts: the merged final state differs"; ok=0; }
  grep -q "^day 3 again $fmt: refused: .*already holds the input" "$E/api.log" || { fail "3-day chain, $fmt parts: day 3 again was not refused"; ok=0; }
  [ -e "$C/again-$fmt" ] && { fail "3-day chain, $fmt parts: a refused run wrote OUTPUT"; ok=0; }
  [ "$ok" = 1 ] && echo "spark-test: three chained days, file:// URIs, $fmt parts ($(grep "^3 days $fmt:" "$E/api.log" | cut -d: -f2- | sed 's/^ //')): every day's results and the merged final state byte-identical to one filter --state chain; day 3 again refused on the driver"
done
grep -h '^day 3 again json' "$E/api.log" | sed 's/^/spark-test:   /'
ls -a "$C" | grep -q '^\.state' && fail "a staging folder was left beside --state-out"

# 7. What a failed run prints and leaves: a part cut short (its task's filter exits 3), one
# line of cause before any trace, nothing left in the temporary folder; gzip bytes named
# .ndjson refused (exit 4) before the JVM starts; a killed run's leftovers swept by the next.
F=$WORK/fail
mkdir -p "$F/tmp"
cp -r "$C/state3-json-1" "$F/parts"
head -c "$(( $(stat -c %s "$F/parts/part-00001.json") - 10 ))" "$F/parts/part-00001.json" > "$F/cut" && mv "$F/cut" "$F/parts/part-00001.json"
gone=$(sh -c 'echo $$'); mkdir -p "$F/tmp/badgeflow-state-$gone-x/inner" "$F/tmp/badgeflow-part-$gone-y"
if TMPDIR=$F/tmp python3 Integrations/spark/badgeflow_spark.py --master 'local[2]' --input "$C/day2.ndjson" \
    --output "$F/out" --badgeflow "$BIN" --state-in "$F/parts" --state-out "$F/state-out" > "$F/log" 2>&1; then
  fail "a run over an empty part did not fail"
else
  first=$(grep -m1 -n 'badgeflow_spark: error:\|Traceback\|Exception\|	at ' "$F/log" || true)
  case $first in
    *"badgeflow_spark: error: partition 1: badgeflow filter exited with status 3: badgeflow: error: state file"*)
      echo "spark-test: a failed task (a part cut short): first line of cause, before any trace: ${first#*:}" ;;
    *) fail "a failed run's first error line is not its cause: $first" ;;
  esac
  left=$(ls -A "$F/tmp" | grep '^badgeflow-' || true)
  [ -z "$left" ] && echo "spark-test: nothing left in the temporary folder by the failed run (a killed run's two folders swept)" \
    || fail "left in the temporary folder: $left"
  if [ -e "$F/out" ] || [ -e "$F/state-out" ] || ls -A "$F" | grep -q '^\.'; then fail "a failed run left OUTPUT, --state-out or a staging folder"; fi
fi
gzip -c "$C/day1.ndjson" > "$F/day.ndjson"
if python3 Integrations/spark/badgeflow_spark.py --input "$F/day.ndjson" --output "$F/gz" --badgeflow "$BIN" 2> "$F/gz.log"; then
  fail "gzip bytes named .ndjson were not refused"
elif [ $? = 4 ] && grep -q 'gzip-compressed input' "$F/gz.log"; then
  echo "spark-test: gzip bytes named .ndjson: $(head -1 "$F/gz.log") (exit 4)"
else
  cat "$F/gz.log"; fail "gzip bytes named .ndjson: not exit 4 naming gzip"
fi

echo "spark-test: $(secs "$T0" "$(now)") s in all"
if [ "$status" = 0 ]; then echo "spark-test: 1 passed, 0 failed"; else echo "spark-test: 0 passed, 1 failed"; fi
exit $status
