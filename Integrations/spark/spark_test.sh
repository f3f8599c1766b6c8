#!/usr/bin/env bash
# make spark-test: a partitioned run on Spark (local[2], 4 partitions) must merge into exactly
# the bytes of one `badgeflow filter` run. Installs Java and PySpark when missing.
#   LINES=200000 SEED=15 ALL_AT=1 Integrations/spark/spark_test.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
LINES=${LINES:-200000}
SEED=${SEED:-15}
GEN_ARGS=(--lines "$LINES" --seed "$SEED")
[ "${ALL_AT:-0}" = 1 ] && GEN_ARGS+=(--all-at)
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

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

python3 Integrations/spark/gen_stream.py "${GEN_ARGS[@]}" > "$WORK/stream.ndjson"
echo "spark-test: stream ${GEN_ARGS[*]}: $(wc -l < "$WORK/stream.ndjson") lines, $(wc -c < "$WORK/stream.ndjson") bytes"

t=$(now)
"$BIN" filter "$WORK/stream.ndjson" > "$WORK/single.ndjson"
single=$(secs "$t" "$(now)")
n=$(wc -l < "$WORK/single.ndjson")
echo "spark-test: one badgeflow filter run: $n result lines in $single s ($(awk -v n="$n" -v s="$single" 'BEGIN { printf "%d", n / s }') lines/s)"

t=$(now)
python3 Integrations/spark/badgeflow_spark.py --master 'local[2]' --partitions 4 \
  --input "$WORK/stream.ndjson" --output "$WORK/out" --badgeflow "$BIN" ${PROFILE:+--profile} 2> "$WORK/spark.log" \
  || { cat "$WORK/spark.log"; exit 1; }
spark=$(secs "$t" "$(now)")
grep '^badgeflow_spark:' "$WORK/spark.log" | sed 's/^/spark-test: /'
m=$(wc -l < "$WORK/out/merged/part-00000")
echo "spark-test: Spark local[2], 4 partitions: $m result lines in $spark s ($(awk -v n="$m" -v s="$spark" 'BEGIN { printf "%d", n / s }') lines/s)"
echo "spark-test: parts: $(for f in "$WORK"/out/parts/part-*; do wc -l < "$f"; done | tr '\n' ' ')"

status=0
if cmp -s "$WORK/single.ndjson" "$WORK/out/merged/part-00000"; then
  echo "spark-test: merged output (--merge driver) is byte-identical to one run"
else
  echo "spark-test: FAIL: merged output differs from one run; first differences:"
  diff "$WORK/single.ndjson" "$WORK/out/merged/part-00000" | head -6 | cut -c1-300
  status=1
fi
# The documented merge without Spark: each part is sorted by seq.
if LC_ALL=C sort -m -s -t: -k2,2n "$WORK"/out/parts/part-* | cmp -s - "$WORK/single.ndjson"; then
  echo "spark-test: sort -m of the parts is byte-identical to one run"
else
  echo "spark-test: FAIL: sort -m of the parts differs from one run"
  status=1
fi
# Line ends, byte-order marks, empty files and several inputs, merged by Spark's sortBy.
E=$WORK/edge
mkdir -p "$E"
printf '\xef\xbb\xbf{"op":"login","device":"x","at":1}\r\n{"op":"tick",\r"device":"x","at":2}\r\n\r\n{"op":"push","device":"y","at":3,"payload":{"aps":{"alert":"a","thread-id":"t"}}}' > "$E/a.ndjson"
: > "$E/b.ndjson"
printf '\n\n\xef\xbb\xbf{"op":"tick","device":"x","at":5}\n{"op":"snapshot","device":"x","at":6}\n\n' > "$E/c.ndjson"
printf '\xef\xbb\xbf{"aps":{"alert":"b","thread-id":"u"},"device":"x"}\nnot json\n{"op":"set","device":"x","path":"root.inbox","count":2,"at":9}\n' > "$E/d.ndjson"
"$BIN" filter "$E/a.ndjson" "$E/b.ndjson" "$E/c.ndjson" "$E/d.ndjson" > "$E/single.ndjson"
t=$(now)
python3 Integrations/spark/badgeflow_spark.py --master 'local[2]' --partitions 3 --merge spark \
  --input "$E/a.ndjson,$E/b.ndjson,$E/c.ndjson,$E/d.ndjson" --output "$E/out" --badgeflow "$BIN" 2> "$E/spark.log" \
  || { cat "$E/spark.log"; exit 1; }
if cmp -s "$E/single.ndjson" "$E/out/merged/part-00000"; then
  echo "spark-test: 4 input files (BOM, CRLF, lone CR, no final newline, empty file), --merge spark: byte-identical ($(wc -l < "$E/single.ndjson") lines, $(secs "$t" "$(now)") s)"
else
  echo "spark-test: FAIL: 4 input files, --merge spark: differs from one run"
  diff "$E/single.ndjson" "$E/out/merged/part-00000" | head -6 | cut -c1-300
  status=1
fi
if [ "$status" = 0 ]; then echo "spark-test: 1 passed, 0 failed"; else echo "spark-test: 0 passed, 1 failed"; fi
exit $status
