#!/usr/bin/env bash
# Batch throughput: 2,000 fixture files (1,900 event streams of 50 lines and 100 single
# payloads, with expectations written once by --update), run with --jobs 1 and --jobs 2.
# Prints files/s (median of RUNS). Usage: bench_batch.sh [FILES]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${BADGEFLOW:-$root/.build/release/badgeflow}"
files="${1:-2000}"
runs="${RUNS:-3}"
data="$root/Benchmarks/.data/batch-$files"
mkdir -p "$root/Benchmarks/.data"
[ -f "$root/Benchmarks/.data/.gitignore" ] || echo '*' > "$root/Benchmarks/.data/.gitignore"
if [ ! -d "$data" ]; then
  mkdir -p "$data"
  python3 - "$data" "$files" "$root/Benchmarks/scripts" <<'PY'
import os, subprocess, sys
out, n, scripts = sys.argv[1], int(sys.argv[2]), sys.argv[3]
streams = n - n // 20
lines = subprocess.run([sys.executable, os.path.join(scripts, "gen_stream.py"), str(streams * 50)],
                       check=True, capture_output=True, text=True).stdout.splitlines()
for i in range(streams):
    with open(os.path.join(out, f"s{i:05d}.ndjson"), "w") as f:
        f.write("\n".join(lines[i * 50:(i + 1) * 50]) + "\n")
for i in range(n - streams):
    with open(os.path.join(out, f"p{i:05d}.json"), "w") as f:
        f.write('{"aps":{"alert":{"title":"T","body":"b %d"},"badge":%d,"thread-id":"t%d"},"type":"chat"}\n' % (i, i % 50, i))
PY
  "$bin" batch --update "$data" > /dev/null
fi
echo "batch over $files files ($(du -sh "$data" | cut -f1)), RUNS=$runs"
for jobs in 1 2; do
  times=()
  for _ in $(seq "$runs"); do
    start=$EPOCHREALTIME
    "$bin" batch --jobs "$jobs" "$data" > /dev/null
    end=$EPOCHREALTIME
    times+=("$(python3 -c "print($end - $start)")")
  done
  python3 - "$jobs" "$files" "${times[@]}" <<'PY'
import sys, statistics
jobs, files, ts = sys.argv[1], int(sys.argv[2]), sorted(map(float, sys.argv[3:]))
print(f"jobs {jobs}: {files / statistics.median(ts):8.0f} files/s  (median {statistics.median(ts):.3f} s; min {ts[0]:.3f} max {ts[-1]:.3f})")
PY
done
