#!/usr/bin/env python3
"""Tests of badgeflow_spark's driver and task code that need no Spark: argument handling,
the driver-side checks, OUTPUT's staging and replacement, numbering in file order, raw
bytes, the filter's stderr in a task's error, the summary and the driver merge.

    BADGEFLOW=.build/release/badgeflow python3 -m unittest -v Integrations/spark/test_badgeflow_spark.py

BADGEFLOW (a built `badgeflow`) is required. `make spark-test` runs these first.
"""
import glob
import gzip
import heapq
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import badgeflow_spark as job  # noqa: E402

BIN = os.environ.get("BADGEFLOW", "")


def recount(lines):
    """What jq over the results says, counted independently of the job's tally: every line
    parsed, every field walked."""
    out = {"results": 0, "errors": {}, "decrements": 0, "decrementTotal": 0, "badgeUpdates": 0,
           "stampedPayloads": 0}
    for line in lines:
        obj = json.loads(line)
        out["results"] += 1
        if "error" in obj:
            out["errors"][obj["error"]["code"]] = out["errors"].get(obj["error"]["code"], 0) + 1
        if "payload" in obj:
            out["stampedPayloads"] += 1
        holders = [obj]
        if obj.get("op") == "expire":
            holders += obj["accounts"]
        for h in holders:
            if "decrement" in h:
                out["decrements"] += 1
                out["decrementTotal"] += h["decrement"]["by"]
            out["badgeUpdates"] += len(h.get("badgeUpdates", []))
    return out


class Base(unittest.TestCase):
    def setUp(self):
        self.assertTrue(BIN and os.access(BIN, os.X_OK), "set BADGEFLOW to a built badgeflow executable")
        self.tmp = tempfile.TemporaryDirectory(prefix="badgeflow-spark-test.")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def file(self, name, data):
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return path


class Arguments(Base):
    def test_filter_args_as_the_readme_writes_them(self):
        for argv, want in [
            (["--filter-args", "--stamp"], ["--stamp"]),            # --filter-args --stamp
            (["--filter-args", "--stamp --jobs 2"], ["--stamp", "--jobs", "2"]),
            (["--filter-args=--stamp"], ["--stamp"]),
            (["--filter-args", "--stamp", "--merge", "none"], ["--stamp"]),
        ]:
            args = job.parse_args(["--input", "x", "--output", "o"] + argv)
            self.assertEqual(job.split_filter_args(args.filter_args), want, argv)
        self.assertEqual(job.parse_args(["--input", "x", "--output", "o", "--filter-args", "--stamp",
                                         "--merge", "none"]).merge, "none")

    def test_refused_filter_args(self):
        for extra, word in [("-o out.ndjson", "-o"), ("-oout.ndjson", "-o"), ("--output=o", "--output"),
                            ("--state s.json", "--state"), ("--state=s.sqlite", "--state"),
                            ("--checkpoint 5", "--checkpoint"),
                            ("--resume", "--resume"), ("--numbered", "--numbered"),
                            ("--stamp --files-from list", "--files-from"), ("--rules r.json", "--rules"),
                            ("a.ndjson", "a.ndjson"), ("--jobs 2 -", "'-'"), ("--stamp -- a", "--")]:
            with self.assertRaises(job.JobError, msg=extra) as caught:
                job.check_filter_args(job.split_filter_args(extra))
            self.assertIn(word, str(caught.exception), extra)
        # A value is never taken for an INPUT; allowed options pass.
        job.check_filter_args(job.split_filter_args("--stamp --jobs 2 --max-line-bytes 4096 --strict"))

    def test_a_refused_run_exits_2_before_the_jvm_starts(self):
        rules = self.file("rules.json", "{ not json")
        out = os.path.join(self.dir, "exists")
        os.mkdir(out)
        events = self.file("e.ndjson", '{"op":"tick"}\n')
        script = os.path.join(HERE, "badgeflow_spark.py")
        cases = [
            (["--rules", rules], "rules.json"),
            (["--filter-args", "-o x.ndjson"], "-o is not allowed"),
            (["--filter-args=--state s.json"], "--state is not allowed"),
            (["--filter-args", "--no-such-option"], "--no-such-option"),
            (["--badgeflow", os.path.join(self.dir, "nope")], "not found on the driver"),
        ]
        for argv, word in cases:
            started = time.time()
            proc = subprocess.run([sys.executable, script, "--input", events, "--output",
                                   os.path.join(self.dir, "new"), "--badgeflow", BIN] + argv,
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 2, (argv, proc.stderr))
            self.assertIn(word, proc.stderr, argv)
            self.assertNotIn("Spark", proc.stderr, argv)      # no JVM log lines
            self.assertLess(time.time() - started, 10, argv)
        proc = subprocess.run([sys.executable, script, "--input", events, "--output", out, "--badgeflow", BIN],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("exists; pass --overwrite", proc.stderr)
        self.assertNotIn("Spark", proc.stderr)


class DriverCheck(Base):
    def test_rules_binary_and_options_are_checked_with_the_filters_own_message(self):
        bad = self.file("bad-rules.json", '{"root": 3}')
        with self.assertRaises(job.JobError) as caught:
            job.driver_check(BIN, bad, [])
        self.assertIn("failed on the driver (exit status 2)", str(caught.exception))
        self.assertIn("bad-rules.json", str(caught.exception))
        with self.assertRaises(job.JobError) as caught:
            job.driver_check(BIN, None, ["--max-line-bytes", "12"])
        self.assertIn("--max-line-bytes", str(caught.exception))
        with self.assertRaises(job.JobError):
            job.driver_check(os.path.join(self.dir, "missing-badgeflow"), None, [])
        with self.assertRaises(job.JobError):
            job.driver_check(BIN, os.path.join(self.dir, "missing-rules.json"), [])
        self.assertIn("--stamp", job.driver_check(BIN, None, ["--stamp"]))
        # A name that is nowhere on the driver may be on the executors' PATH: not checked.
        self.assertIsNone(job.driver_check("no-such-badgeflow-anywhere", None, []))
        # ... unless it was shipped (SparkFiles' folder).
        shipped = os.path.join(self.dir, "shipped")
        os.mkdir(shipped)
        os.symlink(os.path.abspath(BIN), os.path.join(shipped, "badgeflow-shipped"))
        self.assertIsNotNone(job.driver_check("badgeflow-shipped", None, [], shipped_dir=shipped))


class Output(Base):
    def staged(self, path, text):
        out = job.LocalOutput(path)
        os.makedirs(out.staging)
        out.write("summary.json", text.encode())
        return out

    def read(self, path):
        with open(os.path.join(path, "summary.json")) as f:
            return f.read()

    def leftovers(self):
        return [n for n in os.listdir(self.dir) if n.startswith(".")]

    def test_a_new_output_is_moved_into_place_and_an_old_one_replaced_only_with_overwrite(self):
        path = os.path.join(self.dir, "replay")
        self.staged(path, "one").commit(overwrite=False)
        self.assertEqual(self.read(path), "one")
        second = self.staged(path, "two")
        with self.assertRaises(job.JobError):
            job.check_output(path, False, second.exists())
        with self.assertRaises(job.JobError):
            second.commit(overwrite=False)
        self.assertEqual(self.read(path), "one")
        second.commit(overwrite=True)
        self.assertEqual(self.read(path), "two")
        self.assertEqual(sorted(os.listdir(path)), ["summary.json"])  # nothing of the old one
        self.assertEqual(self.leftovers(), [])

    def test_a_failed_run_leaves_no_output(self):
        path = os.path.join(self.dir, "replay")
        out = self.staged(path, "half")
        out.discard()
        self.assertFalse(os.path.exists(path))
        self.assertEqual(self.leftovers(), [])

    def test_output_in_a_missing_folder_is_refused(self):
        with self.assertRaises(job.JobError):
            job.LocalOutput(os.path.join(self.dir, "no", "replay")).check_parent()


class Numbering(unittest.TestCase):
    def test_files_in_byte_order_of_their_paths_inputs_in_the_order_given(self):
        hours = ["file:/d/hour-%02d.ndjson" % h for h in range(24)]
        shuffled = [hours[i] for i in (0, 9, 4, 23, 1, 17, 12, 2, 3, 5, 6, 7, 8, 10, 11, 13, 14, 15, 16,
                                       18, 19, 20, 21, 22)]
        counts = [(1, "file:/a/first.ndjson", 0, 5)] + [(0, p, 0, 10) for p in shuffled]
        counts.append((0, "file:/d/hour-03.ndjson", 64, 7))  # a second block of one file
        bases, files, total = job.line_bases(counts)
        self.assertEqual([p for p, _ in files], [p for p in hours] + ["file:/a/first.ndjson"])
        self.assertEqual(bases[(0, "file:/d/hour-00.ndjson", 0)], 0)
        self.assertEqual(bases[(0, "file:/d/hour-03.ndjson", 64)], 40)
        self.assertEqual(bases[(0, "file:/d/hour-04.ndjson", 0)], 47)
        self.assertEqual(bases[(1, "file:/a/first.ndjson", 0)], 247)
        self.assertEqual(total, 252)
        self.assertEqual(dict(files)["file:/d/hour-03.ndjson"], 17)
        # %-escaped paths sort by their bytes: "a b" (a%20b) before "a~".
        _, files, _ = job.line_bases([(0, "file:/a~", 0, 1), (0, "file:/a%20b", 0, 1)])
        self.assertEqual([p for p, _ in files], ["file:/a b", "file:/a~"])

    def test_rows_are_numbered_blank_lines_counted_and_dropped_bom_stripped_per_file(self):
        bases = {(0, "f", 0): 0, (0, "f", 100): 3, (0, "g", 0): 5}
        rows = [(0, "g", 0, bytearray(b"\xef\xbb\xbf{\"g\":1}")), (0, "f", 100, bytearray(b"\xef\xbb\xbfx")),
                (0, "f", 0, bytearray(b"\xef\xbb\xbf{}")), (0, "g", 0, bytearray(b" \t\r")),
                (0, "f", 0, bytearray(b"")), (0, "f", 100, bytearray(b"\xff\xfe")),
                (0, "f", 0, bytearray(b"{\"c\":1}\r")), (0, "g", 0, bytearray(b"\xef\xbb\xbf"))]
        got = sorted(job.number_rows(bases)(iter(rows)))
        self.assertEqual(got, [(1, b"{}"), (3, b"{\"c\":1}\r"), (4, b"\xef\xbb\xbfx"), (5, b"\xff\xfe"),
                               (6, b"{\"g\":1}"), (8, b"\xef\xbb\xbf")])

    def test_keys(self):
        self.assertEqual(job.partition_key(b'{"account":"a","device":"d"}'), "a")
        self.assertEqual(job.partition_key(b'{"device":"d"}'), "d")
        self.assertEqual(job.partition_key(b'{"aps":{},"account":"a"}'), "")
        self.assertEqual(job.partition_key(b'{"account":"\xff"}'), "")
        self.assertEqual(job.partition_key(b'{"account":"\xc3\xa9"}'), "\u00e9")
        self.assertEqual(job.result_seq(b'{"seq":42,"op":"tick"}'), 42)


class Pipe(Base):
    def test_raw_bytes_reach_the_filter_as_one_run_reads_them(self):
        lines = [b'{"op":"tick","device":"a","at":1}', b'{"op":"tick","device":"\xff\xfe","at":2}',
                 b'{"op":"snapshot","device":"a","at":3}', b'{"op":"tick","device":"\xef\xbf\xbd","at":4}']
        events = self.file("e.ndjson", b"\n".join(lines) + b"\n")
        one = subprocess.run([BIN, "filter", events], capture_output=True, check=True).stdout
        pipe = job.make_pipe(BIN, None, [], 1, resolve=lambda name: name)
        got = b"".join(line + b"\n" for line in pipe(0, iter(((0, i + 1), line) for i, line in enumerate(lines))))
        self.assertEqual(got, one)
        self.assertIn(b'"invalid-utf8"', got.splitlines()[1])
        self.assertNotIn(b'"error"', got.splitlines()[3])  # a real U+FFFD is a valid device id

    def test_a_failed_filter_fails_the_task_with_its_stderr(self):
        fake = self.file("fake-badgeflow", "#!/bin/sh\ncat > /dev/null\n"
                                           "echo 'badgeflow: error: the disk is on fire' >&2\nexit 5\n")
        os.chmod(fake, 0o755)
        pipe = job.make_pipe(fake, None, [], 1, resolve=lambda name: name)
        with self.assertRaises(RuntimeError) as caught:
            list(pipe(7, iter([((0, 1), b'{"op":"tick"}')])))
        text = str(caught.exception)
        self.assertIn("exited with status 5 in partition 7", text)
        self.assertIn("the disk is on fire", text)


class State(Base):
    """Partitioned state on the driver and in a task: parts checked, their P against the
    run's, a state split on the fly, a task's filter on a private copy of its part."""

    EVENTS = [b'{"op":"push","account":"acct-%d","device":"d%d","at":%d,"payload":{"aps":{"alert":"a","thread-id":"t"}}}'
              % (i, i, 1700000000 + i) for i in range(40)]

    def whole(self, name="one.json"):
        path = os.path.join(self.dir, name)
        subprocess.run([BIN, "filter", "--state", path], input=b"\n".join(self.EVENTS) + b"\n",
                       stdout=subprocess.DEVNULL, check=True)
        return path

    @staticmethod
    def read(path):
        with open(path, "rb") as f:
            return f.read()

    def split(self, state, parts, folder):
        subprocess.run([BIN, "state", "split", state, "--parts", str(parts), folder], check=True)
        return folder

    def test_parts_are_read_checked_and_their_p_is_the_runs(self):
        folder = self.split(self.whole(), 4, os.path.join(self.dir, "parts"))
        self.assertEqual(job.part_record(os.path.join(folder, "part-00002.json")), (4, 2, "crc32"))
        self.assertIsNone(job.part_record(self.whole("other.json")))
        self.assertEqual(job.state_parts(folder), ("json", 4))
        self.assertEqual(job.check_state_partitions(folder, 4, None), 4)
        self.assertEqual(job.check_state_partitions(folder, 4, 4), 4)
        with self.assertRaises(job.JobError) as caught:
            job.check_state_partitions(folder, 4, 8)
        self.assertIn("is split into 4 parts; this run has 8 partitions", str(caught.exception))
        # SQLite parts record it in meta rows.
        subprocess.run([BIN, "state", "convert", self.whole(), os.path.join(self.dir, "one.sqlite")], check=True)
        sq = self.split(os.path.join(self.dir, "one.sqlite"), 3, os.path.join(self.dir, "sq"))
        self.assertEqual(job.part_record(os.path.join(sq, "part-00001.sqlite")), (3, 1, "crc32"))
        self.assertEqual(job.state_parts(sq), ("sqlite", 3))

    def test_a_split_state_that_is_not_whole_is_refused(self):
        folder = self.split(self.whole(), 4, os.path.join(self.dir, "parts"))
        os.rename(os.path.join(folder, "part-00003.json"), os.path.join(self.dir, "aside.json"))
        with self.assertRaises(job.JobError) as caught:
            job.state_parts(folder)
        self.assertIn("split into 4 parts, 3 of them found", str(caught.exception))
        other = self.split(self.whole(), 8, os.path.join(self.dir, "eight"))
        os.rename(os.path.join(other, "part-00003.json"), os.path.join(folder, "part-00003.json"))
        with self.assertRaises(job.JobError) as caught:
            job.state_parts(folder)
        self.assertIn("part-00003.json is a part of 8", str(caught.exception))
        os.rename(os.path.join(other, "part-00005.json"), os.path.join(folder, "part-00003.json"))
        with self.assertRaises(job.JobError):
            job.state_parts(folder)   # index 5 under the name of 3
        with self.assertRaises(job.JobError) as caught:
            job.state_parts(os.path.join(self.dir, "none"))
        self.assertIn("no such folder", str(caught.exception))

    def test_a_state_file_is_split_on_the_driver_and_no_state_gives_empty_parts(self):
        whole = self.whole()
        folder, ext, parts = job.prepare_state(BIN, whole, None, "json", 3, self.dir)
        self.assertEqual((ext, parts), ("json", 3))
        self.assertEqual(job.state_parts(folder), ("json", 3))
        scratch = os.path.join(self.dir, "s2")
        os.mkdir(scratch)
        folder, ext, parts = job.prepare_state(BIN, None, os.path.join(self.dir, "out"), "sqlite", 2, scratch)
        self.assertEqual(job.state_parts(folder), ("sqlite", 2))
        with self.assertRaises(job.JobError):
            job.prepare_state(BIN, os.path.join(self.dir, "missing.json"), None, "json", 2, self.dir)

    def test_a_task_runs_its_filter_on_a_copy_of_its_part_and_writes_the_part_out(self):
        whole = self.whole()
        folder = self.split(whole, 2, os.path.join(self.dir, "parts"))
        before = {n: self.read(os.path.join(folder, n)) for n in os.listdir(folder)}
        out = os.path.join(self.dir, "out")
        os.mkdir(out)
        line = b'{"op":"push","account":"acct-7","device":"d7","at":1800000000,"payload":{"aps":{"alert":"b","thread-id":"u"}}}'
        split = job.stable_partition("acct-7", 2)
        pipe = job.make_pipe(BIN, None, [], 1, resolve=lambda name: name, state=(folder, "json", out))
        first = list(pipe(split, iter([((split, 41), line)])))
        # The part in is untouched (a retried task starts from it again); a retry gives the same.
        self.assertEqual({n: self.read(os.path.join(folder, n)) for n in os.listdir(folder)}, before)
        written = self.read(os.path.join(out, "part-%05d.json" % split))
        self.assertEqual(list(pipe(split, iter([((split, 41), line)]))), first)
        self.assertEqual(self.read(os.path.join(out, "part-%05d.json" % split)), written)
        self.assertEqual(os.listdir(out), ["part-%05d.json" % split])
        # The result is what one run over the whole state gives for that line.
        one = subprocess.run([BIN, "filter", "--numbered", "--state", whole], input=b"41\t" + line + b"\n",
                             stdout=subprocess.PIPE, check=True).stdout
        self.assertEqual(b"".join(r + b"\n" for r in first), one)
        self.assertIn(b'"index": %d' % split, written)

    def test_a_part_the_executor_does_not_have_fails_the_task_saying_how_to_ship_it(self):
        with self.assertRaises(RuntimeError) as caught:
            job.resolve_part(os.path.join(self.dir, "elsewhere"), "part-00003.json")
        self.assertIn("spark-submit --files", str(caught.exception))
        path = self.file("part-00001.json", "{}")
        self.assertEqual(job.resolve_part(self.dir, "part-00001.json"), path)

    def test_state_options_in_filter_args(self):
        with self.assertRaises(job.JobError) as caught:
            job.check_filter_args(["--checkpoint", "5"])
        self.assertIn("pass --state-in or --state-out", str(caught.exception))
        job.check_filter_args(["--checkpoint", "5", "--max-resident=100"], state=True)
        with self.assertRaises(job.JobError) as caught:
            job.check_filter_args(["--state", "s.json"], state=True)
        self.assertIn("--state-in and --state-out", str(caught.exception))

    def test_a_mismatched_state_or_an_existing_state_out_is_refused_before_the_jvm_starts(self):
        folder = self.split(self.whole(), 4, os.path.join(self.dir, "parts"))
        events = self.file("e.ndjson", '{"op":"tick"}\n')
        script = os.path.join(HERE, "badgeflow_spark.py")
        for argv, word in [(["--state-in", folder, "--partitions", "8"], "is split into 4 parts; this run has 8"),
                           (["--state-out", folder], "exists; pass --overwrite"),
                           (["--state-in", os.path.join(self.dir, "nope")], "no such folder or file")]:
            started = time.time()
            proc = subprocess.run([sys.executable, script, "--input", events, "--output",
                                   os.path.join(self.dir, "new"), "--badgeflow", BIN] + argv,
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 2, (argv, proc.stderr))
            self.assertIn(word, proc.stderr, argv)
            self.assertNotIn("Spark", proc.stderr, argv)
            self.assertLess(time.time() - started, 10, argv)
            self.assertFalse(os.path.exists(os.path.join(self.dir, "new")))


class Summary(Base):
    def results(self):
        """Real results: every scenario fixture through the filter with --stamp, and an
        `expire` line as one filter run writes it (accounts with decrements and badge updates)."""
        lines = []
        for events in sorted(glob.glob(os.path.join(ROOT, "Fixtures/scenarios/*.ndjson"))):
            if events.endswith(".expected.ndjson"):
                continue
            rules = events[:-len(".ndjson")] + ".rules.json"
            argv = [BIN, "filter", "--stamp"] + (["--rules", rules] if os.path.exists(rules) else []) + [events]
            lines += subprocess.run(argv, capture_output=True, check=True).stdout.splitlines()
        lines.append(b'{"seq":9,"op":"expire","at":100,"accounts":[{"account":"A","expired":["root.chat.x"],'
                     b'"changes":[],"decrement":{"by":2,"paths":["root.chat.x"]},"icon":0,"badgeUpdates":'
                     b'[{"device":"p","badge":0},{"device":"q","badge":0}]},{"account":"B","expired":[],'
                     b'"changes":[],"icon":1}]}')
        return lines

    def test_the_tally_is_what_a_recount_of_every_field_says(self):
        lines = self.results()
        want = recount(lines)
        self.assertGreater(want["stampedPayloads"], 0)
        self.assertGreater(want["badgeUpdates"], 2)
        self.assertGreater(want["decrements"], 1)
        self.assertGreater(len(want["errors"]), 1)
        # Tallied in two halves (two tasks) and added, as the accumulator does.
        a, b = job.new_tally(), job.new_tally()
        for i, line in enumerate(lines):
            job.tally_line(a if i % 2 else b, line)
        got = job.add_tallies(a, b)
        doc = job.summary_document(got, len(lines) + 3, [("f", len(lines) + 3)], 4)
        self.assertEqual({k: doc[k] for k in want}, want)
        self.assertEqual(doc["lines"], len(lines) + 3)


class FleetExpire(unittest.TestCase):
    """The fleet-wide expire line goes to every partition; the P result lines of its seq
    combine into exactly the line one run writes."""

    PREFIX = b'{"seq":7,"op":"expire","at":"2026-11-22T10:00:00Z","accounts":['

    def test_entries_are_spliced_byte_exact_in_byte_order_of_account_id(self):
        a = b'{"account":"z\\"q","expired":["root.a","root.b"],"changes":[{"path":"root.a","display":"x,]}"}],"icon":0}'
        b = b'{"account":"\\u00e9x","expired":["root.c"],"changes":[],"decrement":{"by":2,"paths":["root.c"]},"icon":0}'
        c = b'{"account":"Zeta","expired":[],"changes":[],"icon":3,"badgeUpdates":[{"device":"d,1","badge":3}]}'
        d = '{"account":"\u5c0f\u738b","expired":[],"changes":[],"icon":1}'.encode("utf-8")
        e = '{"account":"é","expired":[],"changes":[],"icon":2}'.encode("utf-8")
        parts = [self.PREFIX + a + b"," + d + b"]}", self.PREFIX + b"]}", self.PREFIX + b + b"]}",
                 self.PREFIX + c + b"," + e + b"]}"]
        got = job.combine_expire(parts)
        # "Zeta" < "z\"q" < "é" (C3 A9) < "éx" (escaped; C3 A9 78) < "小王" (E5 B0 8F …)
        self.assertEqual(got, self.PREFIX + b",".join([c, a, e, b, d]) + b"]}")
        self.assertIn(b'\\u00e9x', got)  # the entry's own bytes, not re-escaped
        obj = json.loads(got)
        self.assertEqual([x["account"] for x in obj["accounts"]], ["Zeta", 'z"q', "é", "éx", "小王"])

    def test_nothing_due_anywhere_is_an_empty_list(self):
        empty = b'{"seq":3,"op":"expire","at":100,"accounts":[]}'
        self.assertEqual(job.combine_expire([empty] * 4), empty)
        self.assertEqual(job.combine_expire([empty]), empty)

    def test_an_error_line_is_kept_once_and_differing_results_are_refused(self):
        error = b'{"seq":4,"error":{"code":"invalid-time","message":"at must be ...","at":"/at"}}'
        self.assertEqual(job.combine_expire([error, error, error]), error)
        with self.assertRaises(ValueError):
            job.combine_expire([error, error.replace(b"/at", b"/op")])
        with self.assertRaises(ValueError):
            job.combine_expire([b'{"seq":5,"op":"expire","at":1,"accounts":[]}',
                                b'{"seq":5,"op":"expire","at":2,"accounts":[]}'])
        pairs = [(9, error.replace(b'"seq":4', b'"seq":9')), (3, b'{"seq":3,"op":"expire","at":1,"accounts":[]}')] * 2
        self.assertEqual([job.result_seq(x) for x in job.combine_expires(pairs)], [3, 9])

    def test_only_a_fleet_wide_expire_goes_to_every_partition(self):
        key = job.key_lines(4)
        self.assertEqual(key((5, b'{"op":"expire","at":1}')),
                         [((p, 5), b'{"op":"expire","at":1}') for p in range(4)])
        self.assertEqual(len(key((6, b'{"op":"expire","at":"bad"}'))), 4)
        for line in [b'{"op":"expire","at":1,"account":"a"}', b'{"op":"expire","at":1,"device":"d"}',
                     b'{"op":"tick","device":"expire","at":1}', b'{"op":"expire"', b'{"op":"expire\xff","at":1}']:
            self.assertEqual(len(key((7, line))), 1, line)


class FleetExpireRun(Base):
    def test_a_partitioned_run_with_ttl_marks_and_expire_lines_equals_one_run(self):
        """The job's keying, pipe and merge, without Spark: a generated stream with ttl marks
        and expire lines, 4 partitions, against one filter run, results and tally alike."""
        gen = subprocess.run([sys.executable, os.path.join(HERE, "gen_stream.py"), "--lines", "3000", "--seed", "3",
                              "--accounts", "40", "--devices", "120", "--expire-every", "40"],
                             capture_output=True, check=True).stdout
        events = self.file("e.ndjson", gen)
        one = subprocess.run([BIN, "filter", events], capture_output=True, check=True).stdout
        self.assertGreater(one.count(b'"accounts":[{'), 10)
        numbered = [(i + 1, line) for i, line in enumerate(gen.split(b"\n")[:-1]) if line.strip(job.BLANK)]
        P = 4
        partitions = [[] for _ in range(P)]
        for pair in numbered:
            for (p, number), line in job.key_lines(P)(pair):
                partitions[p].append(((p, number), line))

        class Acc:
            def __init__(self, zero, add):
                self.value, self._add = zero, add

            def add(self, v):
                self.value = self._add(self.value, v)

        tallies = Acc(job.new_tally(), job.add_tallies)
        expires = Acc([], lambda a, b: a + b)
        parts = []
        for p in range(P):
            pipe = job.make_pipe(BIN, None, [], 1, tallies=tallies, resolve=lambda name: name, expires=expires)
            parts.append([line + b"\n" for line in pipe(p, iter(sorted(partitions[p])))])
        combined = job.combine_expires(expires.value)
        tally = tallies.value
        for line in combined:
            tally = job.add_tallies(tally, job.tally_of(line))
        parts.append([line + b"\n" for line in combined])
        merged = b"".join(heapq.merge(*parts, key=job.result_seq))
        self.assertEqual(merged, one)
        want = recount(one.splitlines())  # each expire line counted once, with all its entries
        self.assertEqual({k: tally[k] for k in want}, want)


class Merge(Base):
    def test_gzip_parts_merge_into_one_gzip_file_by_seq(self):
        parts = os.path.join(self.dir, "parts")
        os.mkdir(parts)
        seqs = [[1, 4, 10], [2, 3], [5, 6, 7, 8, 9, 11]]
        for i, s in enumerate(seqs):
            with gzip.open(os.path.join(parts, "part-%05d.gz" % i), "wb") as f:
                f.writelines(b'{"seq":%d,"op":"tick"}\n' % n for n in s)
        job.merge_on_driver(parts, os.path.join(self.dir, "merged"), "gzip")
        with gzip.open(os.path.join(self.dir, "merged", "part-00000.gz"), "rb") as f:
            got = [job.result_seq(line) for line in f]
        self.assertEqual(got, list(range(1, 12)))


if __name__ == "__main__":
    unittest.main()


class GuardRails(Base):
    """What the driver refuses before any task runs, and what a killed run leaves (Integrations/spark/README.md)."""

    DAY = b'{"op":"push","account":"acct-1","device":"d1","payload":{"aps":{"alert":"a"}}}\n' * 3

    def compressed(self, tool, name):
        plain = self.file("plain-" + name, self.DAY)
        packed = os.path.join(self.dir, name)
        with open(packed, "wb") as f:
            subprocess.run(tool + [plain], stdout=f, check=True)
        return packed

    def test_compressed_input_is_refused_whatever_its_name(self):
        for tool, fmt in [(["gzip", "-c"], "gzip"), (["bzip2", "-c"], "bzip2"), (["xz", "-c"], "xz"),
                          (["zstd", "-q", "-c"], "zstd")]:
            packed = self.compressed(tool, "day-%s.ndjson" % fmt)
            with self.assertRaises(job.InputError) as caught:
                job.check_inputs([packed], job.local_ends, lambda text: None)
            self.assertIn("%s-compressed input" % fmt, str(caught.exception))
            self.assertEqual(caught.exception.status, 4)
        # Named for Spark's codec: read through, as documented.
        self.assertEqual(len(job.check_inputs([self.compressed(["gzip", "-c"], "day.ndjson.gz")], job.local_ends,
                                              lambda text: None)), 1)
        # The command line: exit 4 before the JVM starts, naming the format.
        proc = subprocess.run([sys.executable, os.path.join(HERE, "badgeflow_spark.py"), "--input",
                               os.path.join(self.dir, "day-gzip.ndjson"), "--output", os.path.join(self.dir, "out"),
                               "--badgeflow", BIN], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertIn("gzip-compressed input", proc.stderr)
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)  # the JVM never started: one line

    def test_the_digest_is_the_filters_and_a_day_applied_before_is_refused(self):
        day = self.file("day1.ndjson", self.DAY)
        state = os.path.join(self.dir, "s.json")
        subprocess.run([BIN, "filter", "--state", state, day], stdout=subprocess.DEVNULL, check=True)
        digests = job.check_inputs([day], job.local_ends, lambda text: None)
        recorded = job.recorded_inputs(BIN, state)
        self.assertEqual([r["digest"] for r in recorded], [digests[0][0]])
        with self.assertRaises(job.JobError) as caught:
            job.refuse_applied(BIN, state, digests)
        self.assertIn("already holds the input %s" % day, str(caught.exception))
        self.assertIn("(seq 1-3)", str(caught.exception))
        # The parts of a run record the day (a task passes --input-digest): the next run of the
        # same day is refused on the driver, from part-00000, for every part format.
        for fmt in job.STATE_FORMATS:
            whole = os.path.join(self.dir, "empty." + fmt)
            subprocess.run([BIN, "filter", "--state", whole], input=b"", check=True)
            parts = os.path.join(self.dir, "parts-" + fmt)
            subprocess.run([BIN, "state", "split", whole, "--parts", "2", parts], check=True)
            out = os.path.join(self.dir, "out-" + fmt)
            os.mkdir(out)
            pipe = job.make_pipe(BIN, None, [], 1, resolve=lambda name: name, state=(parts, fmt, job.COLLECT),
                                 digests=digests)
            got = list(pipe(0, iter([((0, 1), self.DAY.splitlines()[0])])))
            self.assertEqual(len(got), 2, fmt)
            mark, name, data = got[-1]
            self.assertEqual((mark, name), (job.PART_MARK, "part-00000." + fmt))
            part = job.unpack_part(name, data, out)
            self.assertEqual(job.part_record(part, BIN), (2, 0, "crc32"))
            with self.assertRaises(job.JobError) as caught:
                job.refuse_applied(BIN, part, digests, out)
            self.assertIn("already holds the input", str(caught.exception), fmt)
        self.assertEqual(job.state_parts(parts, BIN), ("rocksdb", 2))

    def test_names_sorted_as_text_that_look_numeric_are_warned_about(self):
        self.assertEqual(job.numeric_order_warning(["d/hour-1", "d/hour-10", "d/hour-2"]), ("hour-10", "hour-2"))
        self.assertIsNone(job.numeric_order_warning(["d/hour-01", "d/hour-02", "d/hour-10"]))
        self.assertIsNone(job.numeric_order_warning(["a/hour-10", "b/hour-2"]))
        said = []
        for n in (1, 2, 10):
            self.file("hour-%d.ndjson" % n, self.DAY)
        files = job.local_input_files(self.dir)
        job.check_inputs(files, job.local_ends, said.append)
        self.assertEqual(len(said), 1)
        self.assertIn("hour-10.ndjson comes before hour-2.ndjson", said[0])
        self.assertIn("hour-02.ndjson", said[0])

    def test_a_failed_task_gives_one_line_of_cause(self):
        text = ("py4j.protocol.Py4JJavaError: An error occurred\n  File ...\nRuntimeError: badgeflow_spark: "
                "`badgeflow filter --numbered --state /tmp/x/part-00001.json` exited with status 3 in partition 1; "
                "its stderr:\nbadgeflow: error: state file part-00001.json: not a BadgeFlow state: empty file\n\tat org...")
        self.assertEqual(job.failure_cause(text), "partition 1: badgeflow filter exited with status 3: "
                                                  "badgeflow: error: state file part-00001.json: not a BadgeFlow state: empty file")
        self.assertIsNone(job.failure_cause("something else"))

    def test_what_a_killed_run_left_is_swept_by_the_next(self):
        gone = subprocess.Popen(["true"])
        gone.wait()
        dead = [os.path.join(self.dir, "badgeflow-state-%d-abc" % gone.pid),
                os.path.join(self.dir, "badgeflow-part-%d-def" % gone.pid)]
        alive = os.path.join(self.dir, "badgeflow-part-%d-ghi" % os.getpid())
        for d in dead + [alive]:
            os.makedirs(os.path.join(d, "inner"))
        self.assertEqual(job.sweep_temporary(self.dir), 2)
        self.assertEqual(sorted(os.listdir(self.dir)), [os.path.basename(alive)])
        out = os.path.join(self.dir, "state-out")
        staged = os.path.join(self.dir, ".state-out.badgeflow-%d-0123" % gone.pid)
        os.makedirs(staged)
        self.assertEqual(job.sweep_staging(out), 1)
        self.assertFalse(os.path.exists(staged))
