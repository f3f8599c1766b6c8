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
import glob
import gzip
import hashlib
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
import tarfile
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
    "--input-digest": "the job passes the digests of its input files itself",
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
    status = 2


class InputError(JobError):
    """An input the job cannot read as lines: compressed where Spark would not decompress it
    (exit status 4 from main, as `badgeflow filter` exits for it)."""
    status = 4


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
                         "the driver into --partitions parts; a local path or any URI Hadoop's FileSystem "
                         "reads (hdfs://, s3a://, file://), copied to the driver and shipped to the executors "
                         "with the job. A day whose input files the state recorded as applied is refused "
                         "before any task runs")
    ap.add_argument("--state-out",
                    help="a folder for the state after the run: one state per partition, part-00000.json … "
                         "(or .sqlite, .rocksdb), to merge with `badgeflow state merge` or to pass as the next "
                         "run's --state-in; a local path or any URI Hadoop's FileSystem writes (each task "
                         "sends its part back to the driver, which writes them there: no shared mount); "
                         "refused when it exists, unless --overwrite")
    ap.add_argument("--state-format", choices=list(STATE_FORMATS), default="json",
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
        self.staging = os.path.join(parent, ".%s.badgeflow-%d-%s" % (name, os.getpid(), uuid.uuid4().hex[:12]))
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

    def put(self, local, relative):
        """Moves the local file or folder `local` to STAGING/relative."""
        os.makedirs(self.staging, exist_ok=True)
        target = os.path.join(self.staging, relative)
        if os.path.isdir(target):
            shutil.rmtree(target)
        shutil.move(local, target)

    def names(self):
        return sorted(os.listdir(self.staging)) if os.path.isdir(self.staging) else []

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
        self.fs.setWriteChecksum(False)  # no .crc files beside the parts on file://

    def exists(self):
        return self.fs.exists(self._Path(self.path))

    def put(self, local, relative):
        """Copies the local file or folder `local` to STAGING/relative through the FileSystem
        API, then removes `local`."""
        self.fs.mkdirs(self._Path(self.staging))
        self.fs.copyFromLocalFile(False, True, self._Path("file://" + os.path.abspath(local)),
                                  self._Path(self.staging + "/" + relative))
        shutil.rmtree(local, ignore_errors=True) if os.path.isdir(local) else os.remove(local)

    def names(self):
        staging = self._Path(self.staging)
        if not self.fs.exists(staging):
            return []
        return sorted(s.getPath().getName() for s in self.fs.listStatus(staging))

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
# Guard rails on the driver, before any task runs: compressed input, a day applied before,
# names sorted as text that look numeric (Integrations/spark/README.md)


END_BYTES = 1 << 20  # a digest hashes the first and the last MiB (as `badgeflow filter` does)
MAGIC = ((b"\x1f\x8b", "gzip", "zcat"), (b"\x28\xb5\x2f\xfd", "zstd", "zstdcat"),
         (b"\xfd7zXZ\x00", "xz", "xzcat"))
# What Spark's text source decompresses by the file's name: read through, as documented.
READ_THROUGH = {"gzip": (".gz",), "bzip2": (".bz2",)}


def compression_of(head):
    """(format, tool) of the compression whose magic bytes `head` starts with, or None."""
    for magic, name, tool in MAGIC:
        if head.startswith(magic):
            return name, tool
    if len(head) >= 4 and head[:3] == b"BZh" and 0x31 <= head[3] <= 0x39:
        return "bzip2", "bzcat"
    return None


def input_digest(size, head, tail):
    """SIZE:SHA256(first MiB):SHA256(last MiB), what `badgeflow filter` records for a file."""
    return "%d:%s:%s" % (size, hashlib.sha256(head).hexdigest(), hashlib.sha256(tail).hexdigest())


def _hidden(name):
    return name.startswith((".", "_"))  # Hadoop's input formats skip these


def local_input_files(path):
    """The files Spark's text source reads for a local `path` (a file, a folder read
    recursively, a glob), hidden ones left out, in byte order of their paths."""
    if any(c in path for c in "*?["):
        found = []
        for match in glob.glob(path):
            found += local_input_files(match)
        return sorted(set(found), key=lambda p: p.encode("utf-8", "surrogateescape"))
    if os.path.isdir(path):
        found = []
        for root, dirs, files in os.walk(path):
            dirs[:] = [d for d in dirs if not _hidden(d)]
            found += [os.path.join(root, f) for f in files if not _hidden(f)]
        return sorted(found, key=lambda p: p.encode("utf-8", "surrogateescape"))
    return [path] if os.path.isfile(path) else []


def local_ends(path):
    """(size, first MiB, last MiB) of a local file."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(END_BYTES)
        f.seek(max(0, size - END_BYTES))
        return size, head, f.read(END_BYTES)


class HadoopFiles:
    """Input files on any file system Hadoop's FileSystem reads (hdfs://, s3a://, file://)."""

    def __init__(self, spark):
        self.jvm = spark.sparkContext._jvm
        self.conf = spark.sparkContext._jsc.hadoopConfiguration()
        self.gateway = spark.sparkContext._gateway

    def _fs(self, path):
        p = self.jvm.org.apache.hadoop.fs.Path(path)
        return p, p.getFileSystem(self.conf)

    def files(self, path):
        p, fs = self._fs(path)
        found = []
        for status in (fs.globStatus(p) or []):
            if status.isDirectory():
                it = fs.listFiles(status.getPath(), True)
                while it.hasNext():
                    f = it.next().getPath()
                    if not any(_hidden(part) for part in f.toUri().getPath().split("/")[-1:]):
                        found.append(f.toString())
            elif not _hidden(status.getPath().getName()):
                found.append(status.getPath().toString())
        return sorted(found, key=path_order)

    def ends(self, path):
        p, fs = self._fs(path)
        size = fs.getFileStatus(p).getLen()
        stream = fs.open(p)
        try:
            def read(at, n):
                buf = self.gateway.new_array(self.jvm.byte, n)
                stream.readFully(at, buf)
                return bytes(self.jvm.java.util.Arrays.copyOf(buf, n))
            return size, read(0, min(size, END_BYTES)), read(max(0, size - END_BYTES), min(size, END_BYTES))
        finally:
            stream.close()


def numeric_order_warning(files):
    """The first two files of one folder read in text order whose numbers say otherwise
    (`hour-10` before `hour-2`), or None."""
    def natural(name):
        return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", name)]
    for a, b in zip(files, files[1:]):
        (da, na), (db, nb) = os.path.split(a), os.path.split(b)
        if da == db and natural(nb) < natural(na):
            return na, nb
    return None


def check_inputs(files, ends, say):
    """The (digest, name) of each input file; refuses (InputError) a compressed file Spark
    would read as lines, and warns when names sorted as text look numeric."""
    digests = []
    for path in files:
        size, head, tail = ends(path)
        found = compression_of(head)
        if found and not path.lower().endswith(READ_THROUGH.get(found[0], ())):
            raise InputError("%s: %s-compressed input; Spark would read its bytes as lines (decompress it with %s, "
                             "or name it %s to have Spark read it through)"
                             % (path, found[0], found[1], "*" + READ_THROUGH[found[0]][0] if found[0] in READ_THROUGH
                                else "it uncompressed"))
        if size:
            digests.append((input_digest(size, head, tail), path))
    inverted = numeric_order_warning(files)
    if inverted:
        say("badgeflow_spark: warning: input files are read in text order of their names, so %s comes before %s; "
            "pad the numbers (%s) if that is not the order meant" % (inverted[0], inverted[1],
                                                                     re.sub(r"\d+", lambda m: m.group(0).zfill(2), inverted[1])))
    return digests


def recorded_inputs(badgeflow, path):
    """The inputs the state at `path` recorded as applied (`badgeflow state info --json`)."""
    binary = locate(badgeflow, on_path=True)
    if binary is None:
        raise JobError("checking --state-in on the driver needs --badgeflow there: %s not found" % badgeflow)
    proc = subprocess.run([binary, "state", "info", "--json", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise JobError("--state-in %s: %s" % (path, proc.stderr.decode("utf-8", "replace").strip()))
    return json.loads(proc.stdout).get("inputs") or []


def refuse_applied(badgeflow, state_path, digests, shown=None):
    """Refuses a day whose input files the state at `state_path` recorded as applied."""
    recorded = {r["digest"]: r for r in recorded_inputs(badgeflow, state_path)}
    for digest, name in digests:
        r = recorded.get(digest)
        if r:
            raise JobError("--state-in %s already holds the input %s (same content: applied %s as %s (seq %d-%d)); "
                           "this day was applied: start from the state before it"
                           % (shown or state_path, name, r["at"], r["name"], r["first_seq"], r["last_seq"]))


def failure_cause(text):
    """One line of cause out of a failed job's error text: the failing task's filter command,
    its exit status and the first line of its stderr; None when there is no such failure."""
    m = re.search(r"badgeflow_spark: `([^`]*)` (exited with status \d+|was killed by signal \d+) in partition (\d+); "
                  r"its stderr:\n(.*)", text)
    if not m:
        return None
    first = m.group(4).split("\\n")[0].split("\n")[0].strip()
    return "partition %s: badgeflow filter %s: %s" % (m.group(3), m.group(2), first)


TEMP_PREFIXES = ("badgeflow-state-", "badgeflow-part-")


def sweep_temporary(folder=None):
    """Removes what a killed run left in the temporary folder (badgeflow-state-PID-…,
    badgeflow-part-PID-… of a process that is gone); returns how many."""
    folder = folder or tempfile.gettempdir()
    swept = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        prefix = next((p for p in TEMP_PREFIXES if name.startswith(p)), None)
        if prefix is None:
            continue
        pid = name[len(prefix):].split("-", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
        swept += 1
    return swept


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_staging(path):
    """Removes the staging folders (.NAME.badgeflow-…) a killed run left beside `path` (a
    local OUTPUT or --state-out)."""
    parent, name = os.path.split(os.path.abspath(path.rstrip("/") or "/"))
    try:
        names = os.listdir(parent)
    except OSError:
        return 0
    swept = 0
    prefix = ".%s.badgeflow-" % name
    for other in names:
        if other.startswith(prefix):
            pid = other[len(prefix):].split("-", 1)[0]
            if pid.isdigit() and _alive(int(pid)):
                continue
            shutil.rmtree(os.path.join(parent, other), ignore_errors=True)
            swept += 1
    return swept


# ----------------------------------------------------------------------------------------
# Partitioned state: parts in, parts out (the driver's side)


PART_NAME = re.compile(r"^part-(\d{5,})\.(json|sqlite|rocksdb)$")
STATE_FORMATS = ("json", "sqlite", "rocksdb")


def state_format_of(path):
    """The format of a state file (or RocksDB folder) by its name, as `badgeflow` tells them."""
    path = path.rstrip("/")
    if path.endswith((".sqlite", ".db")):
        return "sqlite"
    return "rocksdb" if path.endswith(".rocksdb") else "json"


def is_parts_folder(path):
    """A folder of parts (not a RocksDB state, which is a folder too)."""
    return os.path.isdir(path) and state_format_of(path) != "rocksdb"
EMPTY_STATE = b'{"format": "badgeflow-state", "version": 2, "accounts": {}}\n'


def part_record(path, badgeflow="badgeflow"):
    """(parts, index, hash) as a part of a split state records it, or None when it records
    none. JSON: the top-level "partition" member, which BadgeFlow writes before "accounts"
    (only the file's head is read); SQLite: the meta rows partition.parts, .index, .hash;
    RocksDB: what `badgeflow state info --json` says."""
    if path.rstrip("/").endswith(".rocksdb"):
        binary = locate(badgeflow, on_path=True)
        if binary is None:
            raise JobError("reading RocksDB parts on the driver needs --badgeflow there: %s not found" % badgeflow)
        proc = subprocess.run([binary, "state", "info", "--json", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            raise JobError("%s: %s" % (path, proc.stderr.decode("utf-8", "replace").strip()))
        record = json.loads(proc.stdout).get("partition")
        return (int(record["parts"]), int(record["index"]), record.get("hash")) if record else None
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


def state_parts(folder, badgeflow="badgeflow"):
    """(extension, P) of the split state in `folder`, checked: files part-NNNNN.json or
    .sqlite (or folders part-NNNNN.rocksdb) of one format, as many as the P they record, each recording its own index and the
    hash crc32. Raises JobError naming the first part that does not fit."""
    if not os.path.isdir(folder):
        raise JobError("--state-in %s: no such folder or file" % folder)
    found = [(PART_NAME.match(n), n) for n in sorted(os.listdir(folder)) if PART_NAME.match(n)]
    if not found:
        raise JobError("--state-in %s: no parts (part-00000.json … or .sqlite, .rocksdb) in it; split a state with "
                       "`badgeflow state split FILE --parts P %s`" % (folder, folder))
    exts = sorted(set(m.group(2) for m, _ in found))
    if len(exts) > 1:
        raise JobError("--state-in %s: parts of two formats (%s)" % (folder, ", ".join(exts)))
    parts = None
    for m, name in found:
        path = os.path.join(folder, name)
        record = part_record(path, badgeflow)
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
    if state_in and is_parts_folder(state_in):
        ext, parts = state_parts(state_in, badgeflow)
        return os.path.abspath(state_in), ext, check_state_partitions(state_in, parts, partitions)
    if state_in:
        if not os.path.exists(state_in):
            raise JobError("--state-in %s: no such folder or file" % state_in)
        ext = state_format_of(state_in)
        source = state_in
    else:
        ext = state_format
        source = os.path.join(scratch, "empty.json")
        with open(source, "wb") as f:
            f.write(EMPTY_STATE)
        if ext != "json":
            binary = locate(badgeflow, on_path=True)
            if binary is None:
                raise JobError("making the empty %s parts on the driver needs --badgeflow there" % ext)
            converted = os.path.join(scratch, "empty." + ext)
            subprocess.run([binary, "state", "convert", source, converted], check=True)
            source = converted
    folder = os.path.join(scratch, "parts")
    split_state(badgeflow, source, partitions, folder)
    return folder, ext, partitions


def resolve_part(folder, name):
    """An executor's path of a part: FOLDER/NAME when the executor sees it (local mode, a
    shared mount), else the file shipped with spark-submit --files."""
    path = os.path.join(folder, name)
    if os.path.exists(path):
        return path
    try:
        from pyspark import SparkFiles
        shipped = SparkFiles.get(name)
    except Exception:  # noqa: BLE001 - outside a Spark task (tests)
        shipped = None
    if shipped and os.path.exists(shipped):
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


COLLECT = "collect"  # make_pipe's state out: the part goes back to the driver in the task's output
PART_MARK = "badgeflow-part"


def pack_part(path):
    """A part's bytes: the file's, or a tar of a RocksDB folder."""
    if os.path.isdir(path):
        import io
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(path, arcname=os.path.basename(path))
        return buf.getvalue()
    with open(path, "rb") as f:
        return f.read()


def unpack_part(name, data, folder):
    """Writes a part packed by pack_part into `folder`; returns its path."""
    path = os.path.join(folder, name)
    if name.endswith(".rocksdb"):
        import io
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            for member in tar.getmembers():
                if not (member.name == name or member.name.startswith(name + "/")) or not (member.isfile() or member.isdir()):
                    raise JobError("a state part %s holds %s" % (name, member.name))
            tar.extractall(folder)
    else:
        with open(path, "wb") as f:
            f.write(data)
    return path


def make_pipe(badgeflow, rules, extra, jobs, filter_seconds=None, tallies=None, resolve=resolve_file,
              expires=None, state=None, digests=()):
    """The function that runs one partition, (key, line bytes) pairs with key
    (partition, number), through `badgeflow filter --numbered` and yields its result lines
    (bytes). With `expires` (an accumulator of lists), the results of fleet-wide expire lines
    (which every partition gets) go there as (seq, line) instead, for the driver to combine;
    they are not tallied. A filter that fails fails the task with its exit status and the
    end of its stderr.

    With `state` (folder of the parts in, extension, folder for the parts out, COLLECT or
    None), the filter runs with `--state` on a private copy of the partition's part (a
    retried task starts from the part again), which then replaces OUT/part-NNNNN.ext, or with
    COLLECT is yielded last as (PART_MARK, name, bytes) for the driver to write (no folder
    shared with the executors). `digests` ((digest, name) of the input files) are passed as
    `--input-digest`, for the part to record the day."""
    def run(split, records):
        if state:
            sweep_temporary()
        work = tempfile.mkdtemp(prefix="badgeflow-part-%d-" % os.getpid()) if state else None
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
            source = resolve_part(in_dir, name)
            if os.path.isdir(source):
                shutil.copytree(source, part)
            else:
                shutil.copyfile(source, part)
            argv += ["--state", part]
            for digest, input_name in digests:
                argv += ["--input-digest", "%s=%s" % (digest, input_name)]
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
            # One line of cause where the task runs (the console, in local mode), before
            # Spark's own report of the failed task.
            print("badgeflow_spark: error: partition %d: badgeflow filter %s: %s"
                  % (split, how, text.splitlines()[0] if text else ""), file=sys.stderr, flush=True)
            raise RuntimeError("badgeflow_spark: `%s` %s in partition %d; its stderr:\n%s"
                               % (" ".join(argv), how, split, text))
        if failure:
            raise failure[0]
        if state and state[2] == COLLECT:
            yield (PART_MARK, os.path.basename(part), pack_part(part))
        elif state and state[2]:
            name = os.path.basename(part)
            staged = os.path.join(state[2], ".%s.%s" % (name, uuid.uuid4().hex[:12]))
            target = os.path.join(state[2], name)
            if os.path.isdir(part):
                shutil.copytree(part, staged)
                shutil.rmtree(target, ignore_errors=True)  # a retried task's part replaces the first's
            else:
                shutil.copyfile(part, staged)
            os.replace(staged, target)  # a retried task's part replaces the first's
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


def is_uri(path):
    """A path with a scheme (hdfs://, s3a://, file://): read and written through Hadoop's
    FileSystem API."""
    return "://" in path


def check_state_out(state_out, overwrite, spark=None):
    """--state-out: a local path, or (with `spark`) any URI Hadoop's FileSystem writes; the
    driver writes the parts the tasks send back and moves them into place at the end. Refused
    when it exists without --overwrite. Without `spark` a URI is not checked (None)."""
    if state_out is None:
        return None
    if is_uri(state_out):
        if spark is None:
            return None
        out = HadoopOutput(spark, state_out)
    else:
        out = LocalOutput(state_out)
        out.check_parent()
        sweep_staging(out.path)
    if out.exists() and not overwrite:
        raise JobError("--state-out %s exists; pass --overwrite to replace it (at the end of a successful run)" % state_out)
    return out


def fetch_state_in(spark, state_in, scratch):
    """--state-in given as a URI: copied into `scratch` through Hadoop's FileSystem API (the
    tasks get it from there, shipped with the job when the master is not local)."""
    jvm = spark.sparkContext._jvm
    source = jvm.org.apache.hadoop.fs.Path(state_in.rstrip("/"))
    fs = source.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    if not fs.exists(source):
        raise JobError("--state-in %s: no such folder or file" % state_in)
    folder = os.path.join(scratch, "in")
    os.makedirs(folder)
    local = os.path.join(folder, source.getName())
    fs.copyToLocalFile(False, source, jvm.org.apache.hadoop.fs.Path("file://" + local), True)
    for root, _, files in os.walk(local):  # checksums of a file:// copy
        for name in files:
            if name.endswith(".crc") and name.startswith("."):
                os.remove(os.path.join(root, name))
    return local


def list_inputs(spark, paths):
    """The input files, and how to read their ends: locally when every path is local, else
    through Hadoop's FileSystem."""
    if all(local_path(p) is not None for p in paths):
        files = []
        for p in paths:
            files += local_input_files(local_path(p))
        return files, local_ends
    hadoop = HadoopFiles(spark)
    files = []
    for p in paths:
        files += hadoop.files(p)
    return files, hadoop.ends


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
    if state_format not in STATE_FORMATS:
        raise JobError("state_format must be one of %s, got %r" % (", ".join(STATE_FORMATS), state_format))
    # What a killed run left: temporary folders of processes that are gone, staging folders.
    sweep_temporary()
    if isinstance(out, LocalOutput):
        sweep_staging(out.path)
    preflight(output, overwrite, badgeflow, rules, extra, output_exists=out.exists(),
              shipped_dir=SparkFiles.getRootDirectory(), state=with_state)
    state_target = check_state_out(state_out, overwrite, spark)
    # Before any task: compressed input, names in text order that look numeric, and (with a
    # state) the digests of the input files.
    started = time.time()
    files, ends = list_inputs(spark, paths)
    digests = check_inputs(files, ends, say)
    say("badgeflow_spark: %-52s %7.2f s" % ("inputs checked: %d files, digests" % len(files), time.time() - started))
    if merge == "auto":
        merge = "driver" if isinstance(out, LocalOutput) else "spark"
    if merge == "driver" and not isinstance(out, LocalOutput):
        raise JobError("--merge driver needs OUTPUT on the driver's file system and a local master")
    scratch = tempfile.mkdtemp(prefix="badgeflow-state-%d-" % os.getpid()) if with_state else None
    state = None
    try:
        if with_state:
            # Before any input is read: the state's P against the partition count, and the
            # day against the inputs the state recorded.
            started = time.time()
            shown_in = state_in
            if state_in and is_uri(state_in):
                state_in = fetch_state_in(spark, state_in, scratch)
            if state_in and os.path.exists(state_in):
                recorded_at = state_in
                if is_parts_folder(state_in):
                    first = sorted(n for n in os.listdir(state_in) if PART_NAME.match(n))
                    recorded_at = os.path.join(state_in, first[0]) if first else None
                if recorded_at:
                    refuse_applied(badgeflow, recorded_at, digests, shown_in)
            in_dir, ext, partitions = prepare_state(badgeflow, state_in, state_out, state_format,
                                                    partitions if partitions or (state_in and is_parts_folder(state_in))
                                                    else sc.defaultParallelism, scratch)
            if not sc.master.startswith("local"):
                # No folder shared with the executors: each gets the parts with the job.
                for name in sorted(os.listdir(in_dir)):
                    if PART_NAME.match(name):
                        sc.addFile(os.path.join(in_dir, name), recursive=os.path.isdir(os.path.join(in_dir, name)))
            state = (in_dir, ext, COLLECT if state_target is not None else None)
            say("badgeflow_spark: %-52s %7.2f s" % ("state in: %d parts (%s)%s" % (
                partitions, ext, "" if state_in and is_parts_folder(state_in) else ", split on the driver"),
                time.time() - started))
        return _run(spark, sc, paths, out, merge, badgeflow, rules, extra, partitions, overwrite, keep_parts,
                    compress, profile, say, t0, state, state_target, digests, scratch)
    except BaseException:
        if state_target is not None:
            state_target.discard()
        raise
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def _run(spark, sc, paths, out, merge, badgeflow, rules, extra, partitions, overwrite, keep_parts, compress,
         profile, say, t0, state, state_target, digests=(), scratch=None):
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
            make_pipe(badgeflow, rules, extra, task_cpus, filter_seconds, tallies, expires=expires, state=state,
                      digests=digests[-64:]))
        collect = state is not None and state[2] == COLLECT
        lines_out = results
        if collect:
            # Each task's part comes back as its last element: results and parts from one run
            # of the filters (kept for the second pass over them).
            from pyspark import StorageLevel
            results = results.persist(StorageLevel.MEMORY_AND_DISK)
            lines_out = results.filter(lambda r: not isinstance(r, tuple))
        parts_url = out.url + "/parts"
        lines_out.saveAsTextFile(parts_url, codec)
        t = phase("pipe through badgeflow filter --numbered, write parts", t)
        if collect:
            unpacked = os.path.join(scratch, "out")
            os.makedirs(unpacked, exist_ok=True)
            for _, name, data in results.filter(lambda r: isinstance(r, tuple)).toLocalIterator():
                state_target.put(unpack_part(name, data, unpacked), name)
            results.unpersist()
            t = phase("state out: parts written by the driver", t)
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
            written = set(state_target.names())
            missing = [i for i in range(partitions) if "part-%05d.%s" % (i, state[1]) not in written]
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
        if args.state_in and not is_uri(args.state_in) and not os.path.exists(args.state_in):
            raise JobError("--state-in %s: no such folder or file" % args.state_in)
        if args.state_in and not is_uri(args.state_in) and is_parts_folder(args.state_in):
            check_state_partitions(args.state_in, state_parts(args.state_in, args.badgeflow)[1], args.partitions)
        inputs = [p for p in args.input.split(",") if p]
        if all(local_path(p) is not None for p in inputs):
            # Local inputs: compressed ones and a day the state holds, refused before the JVM.
            files, ends = list_inputs(None, inputs)
            digests = check_inputs(files, ends, lambda text: None)
            if args.state_in and not is_uri(args.state_in):
                recorded_at = args.state_in
                if is_parts_folder(args.state_in):
                    first = sorted(n for n in os.listdir(args.state_in) if PART_NAME.match(n))
                    recorded_at = os.path.join(args.state_in, first[0]) if first else None
                if recorded_at:
                    refuse_applied(args.badgeflow, recorded_at, digests, args.state_in)
    except JobError as e:
        print("badgeflow_spark: error: %s" % e, file=sys.stderr)
        return e.status
    from pyspark import SparkConf
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.appName("badgeflow-partitioned-filter")
    if args.master:
        builder = builder.master(args.master)
    elif not SparkConf().contains("spark.master"):
        builder = builder.master("local[*]")
    spark = builder.config("spark.ui.showConsoleProgress", "false").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    quiet_task_failures(spark)
    print("badgeflow_spark: %-52s %7.2f s" % ("spark session (JVM start)", time.time() - t0), file=sys.stderr)
    try:
        run(spark, [p for p in args.input.split(",") if p], args.output, badgeflow=args.badgeflow,
            rules=args.rules, filter_args=extra, partitions=args.partitions or None, merge=args.merge,
            overwrite=args.overwrite, keep_parts=args.keep_parts, compress=args.compress,
            profile=args.profile, state_in=args.state_in, state_out=args.state_out,
            state_format=args.state_format)
    except JobError as e:
        print("badgeflow_spark: error: %s" % e, file=sys.stderr)
        return e.status
    except Exception as e:  # noqa: BLE001 - one line of cause before the trace
        cause = failure_cause(str(e))
        print("badgeflow_spark: error: %s" % (cause or "the Spark job failed: %s" % str(e).splitlines()[0]),
              file=sys.stderr, flush=True)
        import traceback
        traceback.print_exc()
        return 1
    finally:
        spark.stop()
        sweep_after_stop()
    return 0


def sweep_after_stop(folder=None, wait=2.0):
    """After the session stops: the temporary folders of tasks that Spark killed when the job
    failed (their Python workers end with the session, a moment after it stops), so a failed
    run leaves nothing behind even before the next run's sweep."""
    folder = folder or tempfile.gettempdir()
    deadline = time.time() + wait
    while True:
        sweep_temporary(folder)
        try:
            left = [n for n in os.listdir(folder) if n.startswith(TEMP_PREFIXES)]
        except OSError:
            return
        if not left or time.time() >= deadline:
            return
        time.sleep(0.1)


def quiet_task_failures(spark):
    """A failed task is reported once, by the job (its filter's stderr): Spark's own loggers
    of lost tasks, which print each Python trace again, are set to errors only."""
    try:
        jvm = spark.sparkContext._jvm
        level = jvm.org.apache.logging.log4j.Level
        configurator = jvm.org.apache.logging.log4j.core.config.Configurator
        configurator.setLevel("org.apache.spark.scheduler.TaskSetManager", level.ERROR)
        configurator.setLevel("org.apache.spark.executor.Executor", level.OFF)
        configurator.setLevel("org.apache.spark.api.python.PythonRunner", level.OFF)
    except Exception:  # noqa: BLE001 - another logging back end: its own output stays
        pass


if __name__ == "__main__":
    sys.exit(main())
