#!/usr/bin/env python3
"""A partitioned `badgeflow filter` run on Apache Spark (PySpark).

Reads NDJSON events as raw bytes (Spark's text source with `\\n` line ends, every file of a
directory or glob in byte order of its path, invalid UTF-8 kept as it is), numbers the lines
1-based in input order (blank lines counted, as `badgeflow filter` counts them), drops blank
lines, keys each line by its account (a string "account"), else its device (a string "device";
"" when there is none, for a bare payload line and for a line that is not a JSON object),
partitions by a stable hash of the key with each partition's lines in number order, and pipes
every partition through `badgeflow filter --numbered`. A fleet-wide `{"op":"expire","at":T}`
goes to every partition; the driver combines the partitions' result lines of its seq into one
(OUTPUT/parts/part-expire). The results merged by seq are byte for byte what one `badgeflow
filter` run over the input writes.

With --state-in (a folder of parts from `badgeflow state split` or an earlier run, or a state
file split on the driver) and --state-out DIR, each partition's filter runs with `--state` on
a copy of its part (the partition count must be the parts' P) and the parts after the run go
to DIR/part-00000.json … (or .sqlite), for `badgeflow state merge` or the next day's run.

Everything is written to a hidden folder beside OUTPUT and moved into place at the end, so a
failed run leaves no OUTPUT behind and `--overwrite` replaces an old one in one step:

    OUTPUT/merged/part-00000[.gz]   the results, merged by seq (not with --merge none)
    OUTPUT/parts/part-*             each partition's results, sorted by seq, and part-expire:
                                    the combined expire lines (with --merge none, or --keep-parts)
    OUTPUT/summary.json             lines, results, errors by code, decrements, badge updates…

From the command line (the options are listed by --help):

    python3 badgeflow_spark.py --input events.ndjson --output out/ --partitions 64 \\
        --badgeflow /opt/badgeflow/badgeflow --rules rules.json --filter-args --stamp

From a program that has a SparkSession (left running):

    import badgeflow_spark
    summary = badgeflow_spark.run(spark, ["events.ndjson"], "out/", filter_args=["--stamp"])

See Integrations/spark/README.md for what is supported and how to size a cluster.
"""
import argparse
import ctypes
import errno
import gzip
import heapq
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sqlite3
import sys
import tempfile
import threading
import time
import uuid
import zlib
from urllib.parse import unquote

MERGES = ("auto", "driver", "spark", "none")
COMPRESSIONS = (None, "gzip")
GZIP_CODEC = "org.apache.hadoop.io.compress.GzipCodec"
BLANK = b" \t\r\n"   # JSON whitespace: a line of only these is blank (no result)
BOM = b"\xef\xbb\xbf"
STDERR_KEPT = 64 * 1024  # the last bytes of a failed filter's stderr put in the task's error

# `badgeflow filter` options --filter-args must not carry, and why.
REFUSED_FILTER_ARGS = {
    "-o": "the job collects each filter's stdout; an -o FILE on an executor is lost",
    "--output": "the job collects each filter's stdout; an -o FILE on an executor is lost",
    "--state": "the job passes each partition its part of the state itself: use --state-in and --state-out",
    "--resume": "each partition's filter starts from a fresh copy of its part: there is nothing to resume",
    "--no-resume": "each partition's filter starts from a fresh copy of its part: there is nothing to resume",
    "--numbered": "the job numbers the lines and always passes it",
    "--files-from": "the job reads --input and feeds each filter its lines",
    "--rules": "use the job's --rules, which ships the file to the executors",
}
# Refused unless the run has a state (--state-in or --state-out).
STATE_FILTER_ARGS = {
    "--checkpoint": "it needs a state: pass --state-in or --state-out",
    "--max-resident": "it needs a state: pass --state-in or --state-out",
    "--checkpoint-stats": "it needs a state: pass --state-in or --state-out",
}
# `badgeflow filter` options that take a value (the next argument when not given as --opt=V).
VALUED_FILTER_ARGS = {"-o", "--output", "--state", "--checkpoint", "--max-resident", "--files-from",
                      "--rules", "--jobs", "--max-line-bytes", "--expanded-accounts"}


class JobError(Exception):
    """A run refused or failed for a reason its message gives (exit status 2 from main)."""


# ----------------------------------------------------------------------------------------
# Arguments


def normalize_argv(argv):
    """`--filter-args VALUE` as `--filter-args=VALUE`, so that a VALUE starting with `-`
    (`--filter-args --stamp`, `--filter-args "--stamp --jobs 2"`) is taken as the value
    (argparse would take it for an option and stop with "expected one argument")."""
    out = []
    i = 0
    while i < len(argv):
        if argv[i] == "--filter-args" and i + 1 < len(argv):
            out.append("--filter-args=" + argv[i + 1])
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="badgeflow_spark.py",
        description="Partitioned badgeflow filter run on Apache Spark.",
        epilog="Locally, a task gets one attempt with --master local[N]; local[N,F] gives it F.")
    ap.add_argument("--input", required=True,
                    help="NDJSON input: a path Spark reads (file, directory, glob; a directory's files, "
                         "and a glob's, are read in byte order of their paths); several comma-separated "
                         "paths are numbered in the order given, as `badgeflow filter A B` does")
    ap.add_argument("--output", required=True,
                    help="output directory; refused when it exists, unless --overwrite")
    ap.add_argument("--overwrite", action="store_true",
                    help="replace an existing OUTPUT at the end of a successful run (in one step on a "
                         "local file system)")
    ap.add_argument("--partitions", type=int, default=0, help="partitions (default: Spark's default parallelism)")
    ap.add_argument("--badgeflow", default="badgeflow",
                    help="the badgeflow executable: a path on the driver (shipped to executors with "
                         "SparkContext.addFile), a file shipped with spark-submit --files, or a name on PATH")
    ap.add_argument("--rules", help="rules file, found the same way as --badgeflow")
    ap.add_argument("--filter-args", default="",
                    help='more arguments for `badgeflow filter`, e.g. --filter-args --stamp or '
                         '--filter-args "--stamp --max-line-bytes 4194304" (refused: '
                         + ", ".join(sorted(REFUSED_FILTER_ARGS)) + ")")
    ap.add_argument("--state-in",
                    help="the state the run starts from: a folder of parts (`badgeflow state split FILE "
                         "--parts P DIR`, or an earlier run's --state-out), whose P the run's partition count "
                         "must be (the default when --partitions is not given), or a state FILE, split on "
                         "the driver into --partitions parts. Each task reads its part from the path (local "
                         "mode, a shared mount) or, when the executor lacks it, from the files shipped with "
                         "spark-submit --files DIR/part-00000.json,…")
    ap.add_argument("--state-out",
                    help="a folder for the state after the run: one state per partition, part-00000.json … "
                         "(or .sqlite), to merge with `badgeflow state merge` or to pass as the next run's "
                         "--state-in; a path the driver and every executor share (local mode, a shared "
                         "mount); refused when it exists, unless --overwrite")
    ap.add_argument("--state-format", choices=["json", "sqlite"], default="json",
                    help="the parts' format when there is no --state-in (default json)")
    ap.add_argument("--merge", choices=MERGES, default="auto",
                    help="driver: k-way merge of the sorted parts by the driver into OUTPUT/merged/part-00000 "
                         "(needs OUTPUT on the driver's file system); spark: sortBy(seq) into one file "
                         "(any file system; one task sorts everything); none: only OUTPUT/parts, merge later "
                         "with `LC_ALL=C sort -m -s -t: -k2,2n OUTPUT/parts/part-*`; auto (default): driver "
                         "when the master is local and OUTPUT a local path, else spark")
    ap.add_argument("--keep-parts", action="store_true",
                    help="keep OUTPUT/parts beside the merged file (default: the merged file only)")
    ap.add_argument("--compress", choices=["gzip"], help="write the parts and the merged file gzip-compressed")
    ap.add_argument("--master", help="Spark master when not run through spark-submit (default local[*])")
    ap.add_argument("--profile", action="store_true",
                    help="materialise each phase on its own to time it (slower; for figures)")
    args = ap.parse_args(normalize_argv(argv))
    if args.partitions < 0:
        ap.error("--partitions must be 0 (Spark's default) or more, got %d" % args.partitions)
    return args


def split_filter_args(filter_args):
    """--filter-args as a list: a string is split as a shell would (shlex)."""
    if isinstance(filter_args, str):
        try:
            return shlex.split(filter_args)
        except ValueError as e:
            raise JobError("--filter-args %r: %s" % (filter_args, e))
    return list(filter_args)


def check_filter_args(extra, state=False):
    """Refuses what a partition's filter must not be given (see REFUSED_FILTER_ARGS, and
    STATE_FILTER_ARGS without `state`), and INPUTs. Unknown options are left to the filter
    (the driver check runs it)."""
    i = 0
    while i < len(extra):
        arg = extra[i]
        i += 1
        if arg == "--":
            raise JobError("--filter-args: INPUTs after `--` (%s): the job reads --input" % " ".join(extra[i:]))
        if not arg.startswith("-") or arg == "-":
            raise JobError("--filter-args: %r is an INPUT for the filter: the job reads --input and feeds "
                           "each filter its lines" % arg)
        name = arg.split("=", 1)[0] if arg.startswith("--") else arg[:2]
        if name in REFUSED_FILTER_ARGS:
            raise JobError("--filter-args: %s is not allowed: %s" % (name, REFUSED_FILTER_ARGS[name]))
        if name in STATE_FILTER_ARGS and not state:
            raise JobError("--filter-args: %s is not allowed: %s" % (name, STATE_FILTER_ARGS[name]))
        if name in VALUED_FILTER_ARGS and arg.startswith("--") and "=" not in arg:
            i += 1  # its value, whatever it looks like
    return extra


# ----------------------------------------------------------------------------------------
# Driver-side checks (before any input is read, and where possible before the JVM starts)


def locate(name, shipped_dir=None, on_path=False):
    """A driver path for a file given as --badgeflow or --rules, or None when the driver
    does not have it: the path itself, the file shipped to this application (SparkFiles'
    folder, or the working directory as YARN does with --files), or a name on PATH."""
    if os.path.isfile(name):
        return os.path.abspath(name)
    if shipped_dir:
        shipped = os.path.join(shipped_dir, os.path.basename(name))
        if os.path.isfile(shipped):
            return shipped
    if on_path and os.sep not in name:
        return shutil.which(name)
    return None


def driver_check(badgeflow, rules, extra, shipped_dir=None, required=False):
    """Runs `badgeflow filter --numbered [--rules R] EXTRA` on empty input on the driver: a
    missing or broken binary, a rules file that does not compile and an option the filter
    does not take fail here, with the filter's own message, before anything is read.
    Returns what was checked (a sentence), or None when the binary is not on the driver (it
    may be on the executors only); raises JobError for a failure."""
    binary = locate(badgeflow, shipped_dir, on_path=True)
    if binary is None:
        if required or os.sep in badgeflow:
            raise JobError("--badgeflow %s: not found on the driver" % badgeflow)
        return None
    argv = [binary, "filter", "--numbered", "--jobs", "1"]
    if rules:
        path = locate(rules, shipped_dir)
        if path is None:
            if required or os.sep in rules:
                raise JobError("--rules %s: not found on the driver" % rules)
            return None
        argv += ["--rules", path]
    argv += extra
    try:
        # Empty input through a pipe (not /dev/null, which a broken host may have as a file).
        proc = subprocess.run(argv, input=b"", stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    except OSError as e:
        if e.errno == errno.ENOEXEC:
            return None  # built for the executors' platform, not the driver's
        raise JobError("--badgeflow %s: cannot run it on the driver: %s" % (binary, e.strerror or e))
    except subprocess.TimeoutExpired:
        raise JobError("`%s` on empty input did not finish in 120 s on the driver" % " ".join(argv))
    if proc.returncode != 0:
        raise JobError("`%s` failed on the driver (exit status %d) before any input was read:\n%s"
                       % (" ".join(shlex.quote(a) for a in argv), proc.returncode,
                          proc.stderr.decode("utf-8", "replace").rstrip()))
    if proc.stdout:
        raise JobError("`%s` wrote results for empty input: %r" % (" ".join(argv), proc.stdout[:200]))
    return " ".join(shlex.quote(a) for a in argv)


# ----------------------------------------------------------------------------------------
# Output: a hidden folder beside OUTPUT, moved into place at the end


def local_path(path):
    """The local file-system path of `path`, or None when it names another file system."""
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    return None if "://" in path else path


def _libc_renameat2():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


AT_FDCWD = -100
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2


def rename2(src, dst, flags):
    """renameat2(2) with `flags`; False when the system or the file system lacks it."""
    fn = _libc_renameat2()
    if fn is None:
        return False
    if fn(AT_FDCWD, os.fsencode(src), AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), dst)


class LocalOutput:
    """OUTPUT on the driver's file system: staged in a hidden sibling folder, then moved into
    place with one rename (an existing OUTPUT exchanged with it atomically, renameat2)."""

    def __init__(self, path):
        self.path = os.path.abspath(path.rstrip("/") or "/")
        parent, name = os.path.split(self.path)
        self.staging = os.path.join(parent, ".%s.badgeflow-%s" % (name, uuid.uuid4().hex[:12]))
        self.url = self.staging

    def exists(self):
        return os.path.lexists(self.path)

    def check_parent(self):
        parent = os.path.dirname(self.path)
        if not os.path.isdir(parent):
            raise JobError("--output %s: its folder %s does not exist" % (self.path, parent))
        if not os.access(parent, os.W_OK | os.X_OK):
            raise JobError("--output %s: its folder %s is not writable" % (self.path, parent))

    def write(self, relative, data):
        with open(os.path.join(self.staging, relative), "wb") as f:
            f.write(data)

    def remove(self, relative):
        shutil.rmtree(os.path.join(self.staging, relative), ignore_errors=True)

    def commit(self, overwrite):
        if os.path.lexists(self.path):
            if not overwrite:
                raise JobError("--output %s appeared during the run; the results stay in %s" % (self.path, self.staging))
            if rename2(self.staging, self.path, RENAME_EXCHANGE):
                shutil.rmtree(self.staging, ignore_errors=True)  # now the old OUTPUT
                return
            aside = self.staging + ".old"
            os.rename(self.path, aside)
            os.rename(self.staging, self.path)
            shutil.rmtree(aside, ignore_errors=True)
            return
        if not rename2(self.staging, self.path, RENAME_NOREPLACE):
            os.rename(self.staging, self.path)

    def discard(self):
        shutil.rmtree(self.staging, ignore_errors=True)


class HadoopOutput:
    """OUTPUT on another file system (HDFS, S3…), through Hadoop's FileSystem: staged beside
    it, then renamed into place (an old OUTPUT is first renamed aside: two renames, atomic
    each on HDFS; on object stores a rename is a copy)."""

    def __init__(self, spark, path):
        jvm = spark.sparkContext._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        self.path = path.rstrip("/")
        target = self._Path(self.path)
        if target.getParent() is None:
            raise JobError("--output %s: a folder's root cannot be OUTPUT" % path)
        staging = self._Path(target.getParent(), ".%s.badgeflow-%s" % (target.getName(), uuid.uuid4().hex[:12]))
        self.staging = staging.toString()
        self.url = self.staging
        self.fs = target.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    def exists(self):
        return self.fs.exists(self._Path(self.path))

    def check_parent(self):
        pass

    def write(self, relative, data):
        out = self.fs.create(self._Path(self.staging + "/" + relative), True)
        try:
            out.write(bytearray(data))
        finally:
            out.close()

    def remove(self, relative):
        self.fs.delete(self._Path(self.staging + "/" + relative), True)

    def commit(self, overwrite):
        target = self._Path(self.path)
        if self.fs.exists(target):
            if not overwrite:
                raise JobError("--output %s appeared during the run; the results stay in %s" % (self.path, self.staging))
            aside = self._Path(self.staging + ".old")
            if not self.fs.rename(target, aside):
                raise JobError("--output %s: cannot move the old OUTPUT aside" % self.path)
            if not self.fs.rename(self._Path(self.staging), target):
                raise JobError("--output %s: cannot move %s into place" % (self.path, self.staging))
            self.fs.delete(aside, True)
            return
        if not self.fs.rename(self._Path(self.staging), target):
            raise JobError("--output %s: cannot move %s into place" % (self.path, self.staging))

    def discard(self):
        try:
            self.fs.delete(self._Path(self.staging), True)
        except Exception:  # noqa: BLE001 - cleaning up after another failure
            pass


def check_output(output, overwrite, exists):
    """Refuses an existing OUTPUT without --overwrite."""
    if exists and not overwrite:
        raise JobError("--output %s exists; pass --overwrite to replace it (at the end of a successful run)" % output)


# ----------------------------------------------------------------------------------------
# Partitioned state: parts in, parts out (the driver's side)


PART_NAME = re.compile(r"^part-(\d{5,})\.(json|sqlite)$")
EMPTY_STATE = b'{"format": "badgeflow-state", "version": 2, "accounts": {}}\n'


def part_record(path):
    """(parts, index, hash) as a part of a split state records it, or None when it records
    none. JSON: the top-level "partition" member, which BadgeFlow writes before "accounts"
    (only the file's head is read); SQLite: the meta rows partition.parts, .index, .hash."""
    if path.endswith(".sqlite"):
        try:
            db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
            try:
                meta = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'partition.%'"))
            finally:
                db.close()
        except sqlite3.Error as e:
            raise JobError("%s: not a BadgeFlow SQLite state: %s" % (path, e))
        if "partition.parts" not in meta:
            return None
        try:
            return int(meta["partition.parts"]), int(meta["partition.index"]), meta.get("partition.hash")
        except (KeyError, ValueError):
            raise JobError("%s: malformed partition rows %r" % (path, meta))
    head = b""
    with open(path, "rb") as f:
        while b'"accounts"' not in head:
            chunk = f.read(1 << 16)
            if not chunk:
                break
            head += chunk
    head = head[:head.find(b'"accounts"')] if b'"accounts"' in head else head
    at = head.rfind(b'"partition"')
    if at < 0:
        return None
    end = head.find(b"}", at)
    try:
        record = json.loads(head[head.index(b"{", at):end + 1])
        return int(record["parts"]), int(record["index"]), record.get("hash")
    except (ValueError, KeyError, TypeError):
        raise JobError("%s: malformed partition record %r" % (path, head[at:end + 1][:200]))


def state_parts(folder):
    """(extension, P) of the split state in `folder`, checked: files part-NNNNN.json or
    .sqlite of one format, as many as the P they record, each recording its own index and the
    hash crc32. Raises JobError naming the first part that does not fit."""
    if not os.path.isdir(folder):
        raise JobError("--state-in %s: no such folder or file" % folder)
    found = [(PART_NAME.match(n), n) for n in sorted(os.listdir(folder)) if PART_NAME.match(n)]
    if not found:
        raise JobError("--state-in %s: no parts (part-00000.json … or .sqlite) in it; split a state with "
                       "`badgeflow state split FILE --parts P %s`" % (folder, folder))
    exts = sorted(set(m.group(2) for m, _ in found))
    if len(exts) > 1:
        raise JobError("--state-in %s: parts of two formats (%s)" % (folder, ", ".join(exts)))
    parts = None
    for m, name in found:
        path = os.path.join(folder, name)
        record = part_record(path)
        if record is None:
            raise JobError("--state-in %s: %s records no partition; is it a part of a split state?" % (folder, name))
        p, index, hashed = record
        if hashed != "crc32":
            raise JobError("--state-in %s: %s was split with hash %r; this job partitions by crc32" % (folder, name, hashed))
        if index != int(m.group(1)):
            raise JobError("--state-in %s: %s records index %d" % (folder, name, index))
        if parts is None:
            parts = p
        elif p != parts:
            raise JobError("--state-in %s: %s is a part of %d, %s of %d" % (folder, name, p, found[0][1], parts))
    if len(found) != parts:
        raise JobError("--state-in %s: the state is split into %d parts, %d of them found"
                       % (folder, parts, len(found)))
    return exts[0], parts


def check_state_partitions(state_in, parts, partitions):
    """Refuses a run whose partition count is not the state's P; returns the count to use."""
    if partitions and partitions != parts:
        raise JobError("--state-in %s is split into %d parts; this run has %d partitions (leave out "
                       "--partitions, pass --partitions %d, or split the whole state again with "
                       "`badgeflow state split FILE --parts %d DIR`)" % (state_in, parts, partitions, parts, partitions))
    return parts


def split_state(badgeflow, state, partitions, folder):
    """`badgeflow state split STATE --parts P FOLDER` on the driver."""
    binary = locate(badgeflow, on_path=True)
    if binary is None:
        raise JobError("splitting the state on the driver needs --badgeflow there: %s not found" % badgeflow)
    argv = [binary, "state", "split", state, "--parts", str(partitions), folder]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise JobError("`%s` failed (exit status %d):\n%s" % (" ".join(shlex.quote(a) for a in argv), proc.returncode,
                                                               proc.stderr.decode("utf-8", "replace").rstrip()))


def prepare_state(badgeflow, state_in, state_out, state_format, partitions, scratch):
    """The parts every task starts from: (folder, extension, P). A folder of parts is
    checked (and its P against `partitions`, when given); a state FILE is split into
    `partitions` parts in `scratch`, and so is an empty state when there is only --state-out
    (its parts record P, which `state merge` checks)."""
    if state_in and os.path.isdir(state_in):
        ext, parts = state_parts(state_in)
        return os.path.abspath(state_in), ext, check_state_partitions(state_in, parts, partitions)
    if state_in:
        if not os.path.isfile(state_in):
            raise JobError("--state-in %s: no such folder or file" % state_in)
        ext = "sqlite" if state_in.endswith((".sqlite", ".db")) else "json"
        source = state_in
    else:
        ext = state_format
        source = os.path.join(scratch, "empty.json")
        with open(source, "wb") as f:
            f.write(EMPTY_STATE)
        if ext == "sqlite":
            binary = locate(badgeflow, on_path=True)
            if binary is None:
                raise JobError("making the empty SQLite parts on the driver needs --badgeflow there")
            converted = os.path.join(scratch, "empty.sqlite")
            subprocess.run([binary, "state", "convert", source, converted], check=True)
            source = converted
    folder = os.path.join(scratch, "parts")
    split_state(badgeflow, source, partitions, folder)
    return folder, ext, partitions


def resolve_part(folder, name):
    """An executor's path of a part: FOLDER/NAME when the executor sees it (local mode, a
    shared mount), else the file shipped with spark-submit --files."""
    path = os.path.join(folder, name)
    if os.path.isfile(path):
        return path
    try:
        from pyspark import SparkFiles
        shipped = SparkFiles.get(name)
    except Exception:  # noqa: BLE001 - outside a Spark task (tests)
        shipped = None
    if shipped and os.path.isfile(shipped):
        return shipped
    raise RuntimeError("badgeflow_spark: state part %s is not on this executor (ship the parts with "
                       "spark-submit --files, or put --state-in on a path every executor sees)" % path)


# ----------------------------------------------------------------------------------------
# Numbering, keys, partitions (run on the executors; plain functions, tested without Spark)


def path_order(path):
    """The sort key of a file path as Spark reports it (a URI, %-escaped): its bytes."""
    return unquote(path).encode("utf-8", "surrogateescape")


def line_bases(counts):
    """counts: (input index, file path, block start, lines) for every block of lines Spark
    read. Returns ({(input, path, block): number of lines before it}, [(path, lines)] per
    file in order, total lines). Inputs in the order given; within one, files in byte order
    of their paths; within a file, blocks by offset."""
    ordered = sorted(counts, key=lambda c: (c[0], path_order(c[1]), c[2]))
    bases = {}
    files = []
    total = 0
    for index, path, block, lines in ordered:
        bases[(index, path, block)] = total
        total += lines
        if files and files[-1][0] == (index, path):
            files[-1][1] += lines
        else:
            files.append([(index, path), lines])
    return bases, [(unquote(p), n) for (_, p), n in files], total


def number_rows(bases):
    """The function that turns a partition's rows (input, path, block, line bytes), each
    block's rows contiguous and in file order, into (number, line) for non-blank lines,
    numbers 1-based over the whole input. A byte-order mark at the start of a file is
    dropped, as `badgeflow filter` drops one per INPUT file."""
    def number(rows):
        seen = {}
        for index, path, block, line in rows:
            key = (index, path, block)
            k = seen.get(key, 0)
            seen[key] = k + 1
            line = bytes(line)
            if k == 0 and block == 0 and line.startswith(BOM):
                line = line[3:]
            if line.strip(BLANK):
                yield bases[key] + k + 1, line
    return number


def partition_key(line):
    """The account (or device) a line (bytes) belongs to: where `badgeflow filter` keeps its
    state. "" for a line that is not valid UTF-8 or not JSON (the filter rejects it, and a
    rejected line changes no state)."""
    try:
        obj = json.loads(line.decode("utf-8"))
    except ValueError:
        return ""
    if not isinstance(obj, dict) or "aps" in obj:
        return ""            # not an event, or a bare payload: a push to the default device ""
    account = obj.get("account")
    if isinstance(account, str):
        return account
    device = obj.get("device")
    return device if isinstance(device, str) else ""


def is_fleet_expire(line):
    """Whether a line (bytes) is a fleet-wide `{"op":"expire","at":T}`: a JSON object with
    "op" "expire" and no "account", "device" or "aps". It acts on every account, so every
    partition gets it (see key_lines). A substring test comes first: other lines are not
    parsed."""
    if b"expire" not in line:
        return False
    try:
        obj = json.loads(line.decode("utf-8"))
    except ValueError:
        return False
    return (isinstance(obj, dict) and obj.get("op") == "expire"
            and "account" not in obj and "device" not in obj and "aps" not in obj)


def key_lines(partitions):
    """The function that keys a (number, line) pair as ((partition, number), line): the
    partition of its account (or device), or, for a fleet-wide expire line, every partition
    (P records, one number), each partition's filter answering it for its own accounts."""
    def key(pair):
        number, line = pair
        if is_fleet_expire(line):
            return [((p, number), line) for p in range(partitions)]
        return [((stable_partition(partition_key(line), partitions), number), line)]
    return key


def stable_partition(key, partitions):
    """A partition number that is the same in every process (Python's hash() is salted)."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % partitions


def result_seq(line):
    """The seq of a result line (str or bytes): every line starts with {"seq":N,"""
    comma = b"," if isinstance(line, bytes) else ","
    return int(line[7:line.index(comma, 7)])


# ----------------------------------------------------------------------------------------
# Fleet-wide expire lines: P result lines of one seq, combined into the one line a run writes


EXPIRE_ACCOUNTS = b'"accounts":['


def split_entries(body):
    """The top-level JSON values of an array's inside (bytes between `[` and `]`), as raw
    byte slices: commas inside strings, objects and arrays do not split."""
    entries = []
    depth = 0
    in_string = False
    escaped = False
    start = 0
    for i, c in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif c == 0x5C:      # backslash
                escaped = True
            elif c == 0x22:      # quote
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in (0x7B, 0x5B):  # { [
            depth += 1
        elif c in (0x7D, 0x5D):  # } ]
            depth -= 1
        elif c == 0x2C and depth == 0:
            entries.append(body[start:i])
            start = i + 1
    if body:
        entries.append(body[start:])
    return entries


def entry_account(entry):
    """The sort key of an expire entry (bytes `{"account":A,…}`): A, JSON-decoded, as UTF-8
    bytes."""
    if not entry.startswith(b'{"account":"'):
        raise ValueError("an expire entry does not start with its account: %r" % entry[:80])
    i = 12
    while True:
        c = entry[i]
        if c == 0x5C:
            i += 2
        elif c == 0x22:
            break
        else:
            i += 1
    return json.loads(entry[11:i + 1].decode("utf-8")).encode("utf-8", "surrogatepass")


def combine_expire(lines):
    """The one result line (bytes) a single run writes for a fleet-wide expire line, from the
    result lines (bytes, no newline) every partition wrote for it: the common prefix up to
    `"accounts":[`, the entries of all partitions in byte order of account id (their raw
    bytes spliced, never re-serialized), then `]}`. An error line (the same in every
    partition) is kept once. Raises ValueError when the lines do not fit together."""
    lines = [bytes(line) for line in lines]
    if not lines:
        raise ValueError("no result lines to combine")
    first = lines[0]
    at = first.find(EXPIRE_ACCOUNTS)
    if at < 0 or b'"op":"expire"' not in first[:at]:
        if any(line != first for line in lines):
            raise ValueError("the partitions' results for seq %d differ: %r" % (result_seq(first), lines[:2]))
        return first
    prefix = first[:at + len(EXPIRE_ACCOUNTS)]
    entries = []
    for line in lines:
        if not line.startswith(prefix) or not line.endswith(b"]}"):
            raise ValueError("the partitions' results for seq %d differ: %r / %r"
                             % (result_seq(first), first[:200], line[:200]))
        entries += split_entries(line[len(prefix):-2])
    entries.sort(key=entry_account)
    return prefix + b",".join(entries) + b"]}"


def combine_expires(pairs):
    """(seq, result line) pairs the partitions wrote for fleet-wide expire lines: the
    combined lines (bytes), one per seq, in seq order."""
    by_seq = {}
    for seq, line in pairs:
        by_seq.setdefault(seq, []).append(line)
    return [combine_expire(by_seq[seq]) for seq in sorted(by_seq)]


# ----------------------------------------------------------------------------------------
# The summary


SUMMARY_KEYS = ("results", "decrements", "decrementTotal", "badgeUpdates", "stampedPayloads")


def new_tally():
    return {"results": 0, "errors": {}, "decrements": 0, "decrementTotal": 0, "badgeUpdates": 0,
            "stampedPayloads": 0}


def tally_line(t, line):
    """Counts one result line (bytes, no newline) into tally t. Only a line that holds one of
    the keys counted is parsed."""
    t["results"] += 1
    if not (b'"error"' in line or b'"decrement"' in line or b'"badgeUpdates"' in line
            or b'"payload"' in line):
        return
    obj = json.loads(line)
    error = obj.get("error")
    if isinstance(error, dict):
        code = error.get("code", "")
        t["errors"][code] = t["errors"].get(code, 0) + 1
    if "payload" in obj:
        t["stampedPayloads"] += 1
    # An expire result carries one entry per account, each with its own decrement and
    # badge updates.
    entries = [obj] + (obj.get("accounts") or [] if obj.get("op") == "expire" else [])
    for entry in entries:
        decrement = entry.get("decrement")
        if isinstance(decrement, dict):
            t["decrements"] += 1
            t["decrementTotal"] += decrement.get("by", 0)
        t["badgeUpdates"] += len(entry.get("badgeUpdates") or [])


def tally_of(line):
    """The tally of one result line (bytes, no newline)."""
    t = new_tally()
    tally_line(t, line)
    return t


def add_tallies(a, b):
    out = {k: a[k] + b[k] for k in SUMMARY_KEYS}
    errors = dict(a["errors"])
    for code, n in b["errors"].items():
        errors[code] = errors.get(code, 0) + n
    out["errors"] = errors
    return out


def summary_document(tally, lines, files, partitions):
    """OUTPUT/summary.json's object. `lines`: lines read, blank ones included (the last
    seq a run over the input could have); results, errors by code, decrements (results, and
    entries of an expire result, with a `decrement`) and their total `by`, badge updates
    (entries of `badgeUpdates`), stamped payloads (results with `payload`)."""
    return {
        "lines": lines,
        "results": tally["results"],
        "errors": dict(sorted(tally["errors"].items())),
        "decrements": tally["decrements"],
        "decrementTotal": tally["decrementTotal"],
        "badgeUpdates": tally["badgeUpdates"],
        "stampedPayloads": tally["stampedPayloads"],
        "partitions": partitions,
        "files": [{"path": p, "lines": n} for p, n in files],
    }


# ----------------------------------------------------------------------------------------
# The filter processes


def resolve_file(name):
    """An executor's path for a file given as --badgeflow or --rules (see parse_args)."""
    try:
        from pyspark import SparkFiles
        shipped = SparkFiles.get(os.path.basename(name))
    except Exception:  # noqa: BLE001 - outside a Spark task (tests): no shipped files
        shipped = None
    if shipped and os.path.isfile(shipped):
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


def make_pipe(badgeflow, rules, extra, jobs, filter_seconds=None, tallies=None, resolve=resolve_file,
              expires=None, state=None):
    """The function that runs one partition, (key, line bytes) pairs with key
    (partition, number), through `badgeflow filter --numbered` and yields its result lines
    (bytes). With `expires` (an accumulator of lists), the results of fleet-wide expire lines
    (which every partition gets) go there as (seq, line) instead, for the driver to combine;
    they are not tallied. A filter that fails fails the task with its exit status and the
    end of its stderr.

    With `state` (folder of the parts in, extension, folder for the parts out or None), the
    filter runs with `--state` on a private copy of the partition's part (a retried task
    starts from the part again), which then replaces OUT/part-NNNNN.ext."""
    def run(split, records):
        work = tempfile.mkdtemp(prefix="badgeflow-part-") if state else None
        try:
            for line in run_filter(split, records, work):
                yield line
        finally:
            if work:
                shutil.rmtree(work, ignore_errors=True)

    def run_filter(split, records, work):
        argv = [resolve(badgeflow), "filter", "--numbered"]
        part = None
        if state:
            in_dir, ext, _ = state
            name = "part-%05d.%s" % (split, ext)
            part = os.path.join(work, name)
            shutil.copyfile(resolve_part(in_dir, name), part)
            argv += ["--state", part]
        if rules:
            argv += ["--rules", resolve(rules)]
        if not any(a == "--jobs" or a.startswith("--jobs=") for a in extra):
            argv += ["--jobs", str(jobs)]
        argv += extra
        started = time.time()
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, bufsize=1 << 20)
        failure = []
        stderr = []
        fleet = set()  # numbers of the fleet-wide expire lines fed (added before the write)

        def feed():
            try:
                out = proc.stdin
                for (_, number), line in records:
                    if expires is not None and is_fleet_expire(line):
                        fleet.add(number)
                    out.write(b"%d\t%s\n" % (number, line))
                out.close()
            except BaseException as e:  # a broken pipe shows as the filter's exit status
                failure.append(e)
                try:
                    proc.stdin.close()
                except OSError:
                    pass

        def drain():
            kept = b""
            for chunk in iter(lambda: proc.stderr.read(1 << 16), b""):
                kept = (kept + chunk)[-STDERR_KEPT:]
            stderr.append(kept)

        writer = threading.Thread(target=feed, daemon=True)
        reader = threading.Thread(target=drain, daemon=True)
        writer.start()
        reader.start()
        tally = new_tally()
        diverted = []
        for raw in proc.stdout:
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if fleet:
                seq = result_seq(line)
                if seq in fleet:
                    fleet.discard(seq)
                    diverted.append((seq, line))
                    continue
            tally_line(tally, line)
            yield line
        writer.join()
        status = proc.wait()
        reader.join()
        proc.stdout.close()
        proc.stderr.close()
        if filter_seconds is not None:
            filter_seconds.add(time.time() - started)
        if status != 0:
            how = "was killed by signal %d" % -status if status < 0 else "exited with status %d" % status
            text = stderr[0].decode("utf-8", "replace").rstrip() if stderr and stderr[0] else "(nothing on stderr)"
            raise RuntimeError("badgeflow_spark: `%s` %s in partition %d; its stderr:\n%s"
                               % (" ".join(argv), how, split, text))
        if failure:
            raise failure[0]
        if state and state[2]:
            name = os.path.basename(part)
            staged = os.path.join(state[2], ".%s.%s" % (name, uuid.uuid4().hex[:12]))
            shutil.copyfile(part, staged)
            os.replace(staged, os.path.join(state[2], name))  # a retried task's part replaces the first's
        if tallies is not None:
            tallies.add(tally)
        if expires is not None and diverted:
            expires.add(diverted)
    return run


# ----------------------------------------------------------------------------------------
# Merging


def open_part(path):
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


def merge_on_driver(parts_dir, merged_dir, compress=None):
    """Merges the parts (each sorted by seq) into one file: streaming, O(lines x log parts)."""
    import glob
    files = sorted(f for f in glob.glob(os.path.join(parts_dir, "part-*")) if not f.endswith(".crc"))
    os.makedirs(merged_dir)
    handles = [open_part(f) for f in files]
    name = "part-00000.gz" if compress == "gzip" else "part-00000"
    try:
        target = os.path.join(merged_dir, name)
        with (gzip.open(target, "wb", compresslevel=6) if compress == "gzip" else open(target, "wb")) as out:
            out.writelines(heapq.merge(*handles, key=result_seq))
    finally:
        for h in handles:
            h.close()
    open(os.path.join(merged_dir, "_SUCCESS"), "wb").close()


# ----------------------------------------------------------------------------------------
# The run


class _ListParam:
    """An accumulator of lists (concatenated once per successful result task)."""

    def zero(self, value):
        return []

    def addInPlace(self, a, b):
        a.extend(b)
        return a


class _TallyParam:
    """An accumulator of summary tallies (merged once per successful result task)."""

    def zero(self, value):
        return new_tally()

    def addInPlace(self, a, b):
        return add_tallies(a, b)


def ship_this_module():
    """Imported (run() from a program), this module's functions would be pickled by reference
    and the executors could not import them: they go by value instead, as when it runs as a
    script (or, with an older cloudpickle, the file is shipped with addPyFile)."""
    if __name__ == "__main__":
        return
    module = sys.modules[__name__]
    try:
        from pyspark import cloudpickle
        cloudpickle.register_pickle_by_value(module)
    except (ImportError, AttributeError):
        from pyspark import SparkContext
        SparkContext.getOrCreate().addPyFile(os.path.abspath(__file__))


def read_rows(spark, paths):
    """A DataFrame of (input, file, block, line) over the inputs: Spark's text source with
    lines ending at \\n only and the raw bytes of each line (no UTF-8 decoding)."""
    from functools import reduce
    from pyspark.sql import functions as F
    frames = []
    for index, path in enumerate(paths):
        df = (spark.read.option("lineSep", "\n").option("recursiveFileLookup", "true").text(path)
              .select(F.lit(index).alias("input"), F.col("_metadata.file_path").alias("file"),
                      F.col("_metadata.file_block_start").alias("block"),
                      F.col("value").cast("binary").alias("line")))
        frames.append(df)
    return reduce(lambda a, b: a.unionAll(b), frames)


def check_state_out(state_out, overwrite):
    """--state-out: a local path (the driver moves the parts into place), refused when it
    exists without --overwrite."""
    if state_out is None:
        return None
    local = local_path(state_out)
    if local is None:
        raise JobError("--state-out %s: a path the driver and every executor share (a local path or a mount), "
                       "not another file system" % state_out)
    out = LocalOutput(local)
    out.check_parent()
    if out.exists() and not overwrite:
        raise JobError("--state-out %s exists; pass --overwrite to replace it (at the end of a successful run)" % state_out)
    return out


def preflight(output, overwrite, badgeflow, rules, extra, output_exists=None, shipped_dir=None, required=False,
              state=False):
    """Every check that needs no input: --filter-args, OUTPUT, the binary and the rules."""
    check_filter_args(extra, state=state)
    if output_exists is not None:
        check_output(output, overwrite, output_exists)
    return driver_check(badgeflow, rules, extra, shipped_dir=shipped_dir, required=required)


def run(spark, inputs, output, badgeflow="badgeflow", rules=None, filter_args=(), partitions=None,
        merge="auto", overwrite=False, keep_parts=False, compress=None, profile=False, log=None,
        state_in=None, state_out=None, state_format="json"):
    """Runs `badgeflow filter` partitioned by account over `inputs` on the caller's
    SparkSession `spark` (which is left running) and writes OUTPUT (see the module's doc).

    inputs: a path or a list of paths Spark reads (file, directory, glob), numbered in the
    order given. filter_args: a list, or a string split as a shell would. merge: "auto",
    "driver", "spark" or "none". compress: None or "gzip". log: a function given each
    timing line (default: stderr). state_in: a folder of parts or a state file; state_out: a
    folder for the parts after the run; state_format: "json" or "sqlite", the parts' format
    without state_in (see --state-in, --state-out). Returns the summary (what
    OUTPUT/summary.json holds).
    Raises JobError for a refused run (nothing read, OUTPUT untouched)."""
    t0 = time.time()
    say = log or (lambda text: print(text, file=sys.stderr))
    if merge not in MERGES:
        raise JobError("merge must be one of %s, got %r" % (", ".join(MERGES), merge))
    if compress not in COMPRESSIONS:
        raise JobError("compress must be None or 'gzip', got %r" % (compress,))
    paths = [inputs] if isinstance(inputs, str) else list(inputs)
    paths = [p for p in paths if p]
    if not paths:
        raise JobError("no input")
    extra = split_filter_args(filter_args)
    sc = spark.sparkContext
    ship_this_module()
    local = local_path(output)
    if local is not None and sc.master.startswith("local"):
        out = LocalOutput(local)
        out.check_parent()
    else:
        out = HadoopOutput(spark, output)
    from pyspark import SparkFiles
    with_state = bool(state_in or state_out)
    if state_format not in ("json", "sqlite"):
        raise JobError("state_format must be 'json' or 'sqlite', got %r" % (state_format,))
    preflight(output, overwrite, badgeflow, rules, extra, output_exists=out.exists(),
              shipped_dir=SparkFiles.getRootDirectory(), state=with_state)
    state_target = check_state_out(state_out, overwrite)
    if merge == "auto":
        merge = "driver" if isinstance(out, LocalOutput) else "spark"
    if merge == "driver" and not isinstance(out, LocalOutput):
        raise JobError("--merge driver needs OUTPUT on the driver's file system and a local master")
    scratch = tempfile.mkdtemp(prefix="badgeflow-state-") if with_state else None
    state = None
    try:
        if with_state:
            # Before any input is read: the state's P against the partition count.
            started = time.time()
            in_dir, ext, partitions = prepare_state(badgeflow, state_in, state_out, state_format,
                                                    partitions if partitions or (state_in and os.path.isdir(state_in))
                                                    else sc.defaultParallelism, scratch)
            if state_target is not None:
                os.makedirs(state_target.staging)
            state = (in_dir, ext, state_target.staging if state_target is not None else None)
            say("badgeflow_spark: %-52s %7.2f s" % ("state in: %d parts (%s)%s" % (
                partitions, ext, "" if state_in and os.path.isdir(state_in) else ", split on the driver"),
                time.time() - started))
        return _run(spark, sc, paths, out, merge, badgeflow, rules, extra, partitions, overwrite, keep_parts,
                    compress, profile, say, t0, state, state_target)
    except BaseException:
        if state_target is not None:
            state_target.discard()
        raise
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def _run(spark, sc, paths, out, merge, badgeflow, rules, extra, partitions, overwrite, keep_parts, compress,
         profile, say, t0, state, state_target):
    partitions = partitions or sc.defaultParallelism
    task_cpus = int(sc.getConf().get("spark.task.cpus", "1"))
    for path in (badgeflow, rules):
        if path and os.path.isfile(path):
            sc.addFile(os.path.abspath(path))
    filter_seconds = sc.accumulator(0.0)
    tallies = sc.accumulator(new_tally(), _TallyParam())
    expires = sc.accumulator([], _ListParam())
    timings = []

    def phase(name, started):
        timings.append((name, time.time() - started))
        return time.time()

    codec = GZIP_CODEC if compress == "gzip" else None
    try:
        t = time.time()
        rows = read_rows(spark, paths)
        # One pass in the JVM: lines per block of each file, to number them in order.
        counts = [(r["input"], r["file"], r["block"], r["count"])
                  for r in rows.groupBy("input", "file", "block").count().collect()]
        bases, files, lines = line_bases(counts)
        t = phase("count lines per file block", t)
        keyed = (rows.rdd
                 .mapPartitions(number_rows(bases))
                 .flatMap(key_lines(partitions)))
        if profile:
            keyed = keyed.persist()
            lines_in = keyed.count()
            t = phase("read, number, key (json.loads)", t)
        ordered = keyed.repartitionAndSortWithinPartitions(
            numPartitions=partitions, partitionFunc=lambda k: k[0], keyfunc=lambda k: k[1])
        if profile:
            ordered = ordered.persist()
            ordered.count()
            keyed.unpersist()
            t = phase("shuffle: partition by key hash, sort by number", t)
        results = ordered.mapPartitionsWithIndex(
            make_pipe(badgeflow, rules, extra, task_cpus, filter_seconds, tallies, expires=expires, state=state))
        parts_url = out.url + "/parts"
        results.saveAsTextFile(parts_url, codec)
        t = phase("pipe through badgeflow filter --numbered, write parts", t)
        # Fleet-wide expire lines: each partition answered for its own accounts; their lines
        # are combined into one per seq, in a part of their own (sorted by seq like the others).
        tally = tallies.value
        if expires.value:
            try:
                combined = combine_expires(expires.value)
            except ValueError as e:
                raise JobError("combining the partitions' expire results: %s" % e)
            for line in combined:
                tally = add_tallies(tally, tally_of(line))
            data = b"".join(line + b"\n" for line in combined)
            if compress == "gzip":
                out.write("parts/part-expire.gz", gzip.compress(data, compresslevel=6))
            else:
                out.write("parts/part-expire", data)
            t = phase("combine %d fleet-wide expire lines" % len(combined), t)
        if profile:
            ordered.unpersist()
            timings.append(("  of which badgeflow processes (sum over tasks)", filter_seconds.value))
            timings.append(("  non-blank lines: %d" % lines_in, 0.0))

        merged_url = out.url + "/merged"
        if merge == "driver":
            merge_on_driver(parts_url, merged_url, compress)
            t = phase("merge by seq into one file (driver, k-way)", t)
        elif merge == "spark":
            (sc.textFile(parts_url)
             .sortBy(result_seq, numPartitions=partitions)
             .coalesce(1)
             .saveAsTextFile(merged_url, codec))
            t = phase("merge by seq into one file (Spark sortBy)", t)
        if merge != "none" and not keep_parts:
            out.remove("parts")
        summary = summary_document(tally, lines, files, partitions)
        out.write("summary.json", (json.dumps(summary, indent=1) + "\n").encode("utf-8"))
        if state_target is not None:
            missing = [i for i in range(partitions)
                       if not os.path.isfile(os.path.join(state_target.staging, "part-%05d.%s" % (i, state[1])))]
            if missing:
                raise JobError("--state-out: the parts of partitions %s were not written" % missing[:10])
            state_target.commit(overwrite)
        out.commit(overwrite)
    except BaseException:
        out.discard()
        raise
    timings.append(("total (without JVM start)", time.time() - t0))
    for name, seconds in timings:
        say("badgeflow_spark: %-52s %7.2f s" % (name, seconds))
    return summary


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    t0 = time.time()
    try:
        extra = split_filter_args(args.filter_args)
        # Before the JVM starts: the arguments, a local OUTPUT, a binary and rules on the driver.
        local = local_path(args.output)
        preflight(args.output, args.overwrite, args.badgeflow, args.rules, extra,
                  output_exists=os.path.lexists(local) if local is not None else None,
                  state=bool(args.state_in or args.state_out))
        check_state_out(args.state_out, args.overwrite)
        if args.state_in and not os.path.exists(args.state_in):
            raise JobError("--state-in %s: no such folder or file" % args.state_in)
        if args.state_in and os.path.isdir(args.state_in):
            check_state_partitions(args.state_in, state_parts(args.state_in)[1], args.partitions)
    except JobError as e:
        print("badgeflow_spark: error: %s" % e, file=sys.stderr)
        return 2
    from pyspark import SparkConf
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.appName("badgeflow-partitioned-filter")
    if args.master:
        builder = builder.master(args.master)
    elif not SparkConf().contains("spark.master"):
        builder = builder.master("local[*]")
    spark = builder.config("spark.ui.showConsoleProgress", "false").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    print("badgeflow_spark: %-52s %7.2f s" % ("spark session (JVM start)", time.time() - t0), file=sys.stderr)
    try:
        run(spark, [p for p in args.input.split(",") if p], args.output, badgeflow=args.badgeflow,
            rules=args.rules, filter_args=extra, partitions=args.partitions or None, merge=args.merge,
            overwrite=args.overwrite, keep_parts=args.keep_parts, compress=args.compress,
            profile=args.profile, state_in=args.state_in, state_out=args.state_out,
            state_format=args.state_format)
    except JobError as e:
        print("badgeflow_spark: error: %s" % e, file=sys.stderr)
        return 2
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
