#!/usr/bin/env python3
"""A partitioned `badgeflow filter` run on Apache Spark (PySpark, RDD API).

Reads NDJSON events from any path Spark reads, numbers the lines 1-based in input order
(blank lines counted, as `badgeflow filter` counts them), drops blank lines, keys each line by
its account (a string "account"), else its device (a string "device"; "" when there is none,
for a bare payload line and for a line that is not a JSON object), partitions by a stable
hash of the key with each partition's lines in number order, and pipes every partition
through `badgeflow filter --numbered`. Results go to OUTPUT/parts/part-* (each sorted by
seq); unless --merge none, they are then merged by seq into OUTPUT/merged/part-00000, which
is byte for byte what one `badgeflow filter` run over the input writes.

    python3 badgeflow_spark.py --input events.ndjson --output out/ --partitions 64 \\
        --badgeflow /opt/badgeflow/badgeflow --rules rules.json --filter-args "--stamp"

See the README's "Partitioned runs on Apache Spark" for what is supported and how to size
a cluster.
"""
import argparse
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import threading
import time
import zlib


def parse_args(argv):
    ap = argparse.ArgumentParser(description="Partitioned badgeflow filter run on Apache Spark.")
    ap.add_argument("--input", required=True,
                    help="NDJSON input: a path Spark reads (file, directory, glob); several comma-separated "
                         "paths are numbered in the order given, as `badgeflow filter A B` does")
    ap.add_argument("--output", required=True, help="output directory (must not exist)")
    ap.add_argument("--partitions", type=int, default=0, help="partitions (default: Spark's default parallelism)")
    ap.add_argument("--badgeflow", default="badgeflow",
                    help="the badgeflow executable: a path on the driver (shipped to executors with "
                         "SparkContext.addFile), a file shipped with spark-submit --files, or a name on PATH")
    ap.add_argument("--rules", help="rules file, found the same way as --badgeflow")
    ap.add_argument("--filter-args", default="", help='more arguments for `badgeflow filter`, e.g. "--stamp"')
    ap.add_argument("--merge", choices=["auto", "driver", "spark", "none"], default="auto",
                    help="driver: k-way merge of the sorted parts by the driver into OUTPUT/merged/part-00000 "
                         "(needs OUTPUT on the driver's file system); spark: sortBy(seq) into one file "
                         "(any file system; one task sorts everything); none: only OUTPUT/parts, merge later "
                         "with `LC_ALL=C sort -m -s -t: -k2,2n OUTPUT/parts/part-*`; auto (default): driver "
                         "when the master is local and OUTPUT a local path, else spark")
    ap.add_argument("--master", help="Spark master when not run through spark-submit (default local[*])")
    ap.add_argument("--profile", action="store_true",
                    help="materialise each phase on its own to time it (slower; for figures)")
    return ap.parse_args(argv)


BLANK = " \t\r\n"   # JSON whitespace: a line of only these is blank (no result)
BOM = "\ufeff"


def partition_key(line):
    """The account (or device) a line belongs to: where `badgeflow filter` keeps its state."""
    try:
        obj = json.loads(line)
    except ValueError:
        return ""
    if not isinstance(obj, dict) or "aps" in obj:
        return ""            # not an event, or a bare payload: a push to the default device ""
    account = obj.get("account")
    if isinstance(account, str):
        return account
    device = obj.get("device")
    return device if isinstance(device, str) else ""


def stable_partition(key, partitions):
    """A partition number that is the same in every process (Python's hash() is salted)."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % partitions


def result_seq(line):
    """The seq of a result line: every line starts with {"seq":N,"""
    return int(line[7:line.index(",", 7)])


def resolve_file(name):
    """An executor's path for a file given as --badgeflow or --rules (see parse_args)."""
    from pyspark import SparkFiles
    shipped = SparkFiles.get(os.path.basename(name))
    if os.path.isfile(shipped):
        mode = os.stat(shipped).st_mode
        if not mode & stat.S_IXUSR:
            try:
                os.chmod(shipped, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
            except OSError:
                pass
        return shipped
    if os.path.isfile(name):
        return os.path.abspath(name)
    found = shutil.which(name)
    if found:
        return found
    raise RuntimeError("badgeflow_spark: %s not found on this executor (ship it with --files or put it on PATH)" % name)


def make_pipe(badgeflow, rules, extra, jobs, filter_seconds):
    """The function that runs one partition through `badgeflow filter --numbered`."""
    def run(split, records):
        argv = [resolve_file(badgeflow), "filter", "--numbered"]
        if rules:
            argv += ["--rules", resolve_file(rules)]
        if not any(a == "--jobs" or a.startswith("--jobs=") for a in extra):
            argv += ["--jobs", str(jobs)]
        argv += extra
        started = time.time()
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1 << 20)
        failure = []

        def feed():
            try:
                out = proc.stdin
                for (_, number), line in records:
                    out.write(b"%d\t%s\n" % (number, line.encode("utf-8", "surrogatepass")))
                out.close()
            except BaseException as e:  # a broken pipe shows as the filter's exit status
                failure.append(e)
                try:
                    proc.stdin.close()
                except OSError:
                    pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        for raw in proc.stdout:
            yield raw[:-1].decode("utf-8", "surrogateescape") if raw.endswith(b"\n") else raw.decode("utf-8", "surrogateescape")
        writer.join()
        status = proc.wait()
        filter_seconds.add(time.time() - started)
        if status != 0:
            raise RuntimeError("badgeflow_spark: %s exited with status %d in partition %d" % (" ".join(argv), status, split))
        if failure:
            raise failure[0]
    return run


def merge_on_driver(parts_dir, merged_dir):
    """Merges the parts (each sorted by seq) into one file: streaming, O(lines x log parts)."""
    import glob
    import heapq
    files = sorted(glob.glob(os.path.join(parts_dir, "part-*")))
    os.makedirs(merged_dir)
    handles = [open(f, "rb") for f in files]
    try:
        with open(os.path.join(merged_dir, "part-00000"), "wb") as out:
            out.writelines(heapq.merge(*handles, key=lambda line: int(line[7:line.index(b",", 7)])))
    finally:
        for h in handles:
            h.close()
    open(os.path.join(merged_dir, "_SUCCESS"), "wb").close()


def local_path(path):
    """The local file-system path of `path`, or None when it names another file system."""
    if path.startswith("file://"):
        return path[len("file://"):]
    return None if "://" in path else path


def strip_bom(index, lines):
    """Drops a UTF-8 byte-order mark at the start of a file, as `badgeflow filter` does."""
    first = True
    for line in lines:
        if first and index == 0 and line.startswith(BOM):
            line = line[1:]
        first = False
        yield line


def read_numbered(sc, paths):
    """(line, number) pairs, 1-based in input order, blank lines counted."""
    rdds = [sc.textFile(p).mapPartitionsWithIndex(strip_bom, preservesPartitioning=True)
            for p in paths]
    rdd = rdds[0] if len(rdds) == 1 else sc.union(rdds)
    # zipWithIndex numbers in partition order (file order, then offset order): one extra
    # pass over the input to count each partition, unless there is only one.
    return rdd.zipWithIndex()


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    t0 = time.time()
    from pyspark import SparkConf, SparkContext

    conf = SparkConf().setAppName("badgeflow-partitioned-filter")
    if args.master:
        conf.setMaster(args.master)
    elif not conf.contains("spark.master"):
        conf.setMaster("local[*]")
    conf.setIfMissing("spark.ui.showConsoleProgress", "false")
    sc = SparkContext(conf=conf)
    sc.setLogLevel("WARN")
    # Lines end at \n only, as in badgeflow (Hadoop's default also ends them at a lone \r);
    # a \r before the \n stays and is dropped by badgeflow as usual.
    sc._jsc.hadoopConfiguration().set("textinputformat.record.delimiter", "\n")
    t_start = time.time()
    timings = [("spark context (JVM start)", t_start - t0)]

    partitions = args.partitions or sc.defaultParallelism
    extra = shlex.split(args.filter_args)
    task_cpus = int(sc.getConf().get("spark.task.cpus", "1"))
    for path in (args.badgeflow, args.rules):
        if path and os.path.isfile(path):
            sc.addFile(os.path.abspath(path))
    filter_seconds = sc.accumulator(0.0)
    paths = [p for p in args.input.split(",") if p]

    def phase(name, started):
        timings.append((name, time.time() - started))
        return time.time()

    t = time.time()
    numbered = read_numbered(sc, paths)
    keyed = (numbered
             .filter(lambda pair: pair[0].strip(BLANK) != "")
             .map(lambda pair: ((stable_partition(partition_key(pair[0]), partitions), pair[1] + 1), pair[0])))
    if args.profile:
        keyed = keyed.persist()
        lines_in = keyed.count()
        t = phase("read, number (zipWithIndex), key (json.loads)", t)
    ordered = keyed.repartitionAndSortWithinPartitions(
        numPartitions=partitions, partitionFunc=lambda k: k[0], keyfunc=lambda k: k[1])
    if args.profile:
        ordered = ordered.persist()
        ordered.count()
        keyed.unpersist()
        t = phase("shuffle: partition by key hash, sort by number", t)
    results = ordered.mapPartitionsWithIndex(
        make_pipe(args.badgeflow, args.rules, extra, task_cpus, filter_seconds))
    parts_dir = args.output.rstrip("/") + "/parts"
    results.saveAsTextFile(parts_dir)
    t = phase("pipe through badgeflow filter --numbered, write parts", t)
    if args.profile:
        ordered.unpersist()
        timings.append(("  of which badgeflow processes (sum over tasks)", filter_seconds.value))

    merge = args.merge
    if merge == "auto":
        local = sc.master.startswith("local") and local_path(args.output) is not None
        merge = "driver" if local else "spark"
    merged_dir = args.output.rstrip("/") + "/merged"
    if merge == "driver":
        merge_on_driver(local_path(parts_dir), local_path(merged_dir))
        t = phase("merge by seq into one file (driver, k-way)", t)
    elif merge == "spark":
        (sc.textFile(parts_dir)
         .sortBy(result_seq, numPartitions=partitions)
         .coalesce(1)
         .saveAsTextFile(merged_dir))
        t = phase("merge by seq into one file (Spark sortBy)", t)

    sc.stop()
    timings.append(("total", time.time() - t0))
    for name, seconds in timings:
        print("badgeflow_spark: %-52s %7.2f s" % (name, seconds), file=sys.stderr)
    if args.profile:
        print("badgeflow_spark: %d non-blank lines in %d partitions" % (lines_in, partitions), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
