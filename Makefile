# BadgeFlow: `make demo` runs the filter on a fixture stream; `make test` runs every test;
# `make install` installs the release binary and its man page under PREFIX.
SWIFT  ?= swift
BIN    := .build/debug/badgeflow
RBIN   := .build/release/badgeflow
PREFIX ?= /usr/local
# Where swift-argument-parser's GenerateManual plugin writes badgeflow.1 (a folder named after the
# executable target, BadgeFlowCLI).
MANPAGE := .build/plugins/GenerateManual/outputs/BadgeFlowCLI/badgeflow.1

.PHONY: deps man-deps junit-deps schema-deps schema-test browser-deps browser-test report-demo build test demo docs install install-check bench bench-callgrind bench-check bench-deps bench-lib bench-fleet-deps bench-fleet check leaks fuzz clean spark-test lint serve-test serve-deps bench-serve partitioned-queue-test

# json-c (and pkg-config, which SwiftPM uses to find it) and mimalloc (the executable's
# allocator) come from Debian's packages; so do mount(8) and chattr(1), which the full-disk
# and read-only-folder tests use on a tmpfs, and Chromium, the real browser `make test` opens
# reports in (`make browser-test`).
deps:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists json-c || \
	    ! pkg-config --exists sqlite3 || ! command -v sqlite3 >/dev/null 2>&1 || ! pkg-config --exists rocksdb || ! pkg-config --exists libcrypto || \
	    [ ! -f /usr/include/mimalloc.h ] || [ ! -x /usr/bin/mount ] || [ ! -x /usr/bin/chattr ] || \
	    ! command -v chromium >/dev/null 2>&1; then \
	  echo "make: installing libjson-c-dev, libsqlite3-dev, sqlite3, librocksdb-dev, libmimalloc-dev, libssl-dev, pkg-config, mount, e2fsprogs and chromium"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq libjson-c-dev libsqlite3-dev sqlite3 librocksdb-dev libmimalloc-dev libssl-dev pkg-config mount e2fsprogs chromium >/dev/null; \
	fi

# Chromium alone (`make deps` installs it too), for the targets that open reports in it.
browser-deps:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  echo "make: installing chromium"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi

# man (man-db), to check that the installed man page renders.
man-deps:
	@if ! command -v man >/dev/null 2>&1; then \
	  echo "make: installing man-db"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq man-db >/dev/null; \
	fi

# junitparser (PyPI), the JUnit consumer the tests read every JUnit file back with
# (Tests/BadgeFlowCLITests/PayloadGateSuiteTests.swift).
junit-deps:
	@python3 -c 'import junitparser' 2>/dev/null || { echo "make: installing junitparser"; python3 -m pip install -q junitparser; }

# python3 and its jsonschema module (Debian's python3-jsonschema), for `make schema-test`.
schema-deps:
	@if ! python3 -c 'import jsonschema' >/dev/null 2>&1; then \
	  echo "make: installing python3-jsonschema"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq python3-jsonschema >/dev/null; \
	fi

# Schemas/rules.schema.json accepts every rules file in the repository and refuses every shape
# in Fixtures/rules/refused/, as the rules compiler does.
schema-test: schema-deps
	$(SWIFT) build --product badgeflow $(SWIFTFLAGS)
	python3 Scripts/check-rules-schema.py $(BIN)

build: deps
	$(SWIFT) build

test: deps junit-deps
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	$(SWIFT) test --skip-build
	$(BIN) batch --strict Fixtures/scenarios Fixtures/payloads
	$(MAKE) --no-print-directory schema-test
	$(MAKE) --no-print-directory browser-test
	Scripts/check-badgetree-only.sh
	Scripts/partitioned-queue-test.sh $(BIN)
	$(MAKE) install-check

# P consumers of a partitioned queue, killed (kill -9) and resumed independently, re-partitioned
# with state merge/split, give one run's results merged by seq (also part of `make test`).
partitioned-queue-test: deps
	$(SWIFT) build --product badgeflow $(SWIFTFLAGS)
	Scripts/partitioned-queue-test.sh $(BIN)

# The release binary to $(PREFIX)/bin and the man page, generated from the command's own
# definitions by swift-argument-parser's GenerateManual plugin (no network needed once the
# package is resolved), to $(PREFIX)/share/man/man1.
install: deps
	$(SWIFT) build -c release --product badgeflow
	$(SWIFT) package plugin generate-manual
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/man/man1"
	install -m 755 $(RBIN) "$(DESTDIR)$(PREFIX)/bin/badgeflow"
	install -m 644 $(MANPAGE) "$(DESTDIR)$(PREFIX)/share/man/man1/badgeflow.1"

# badgeflow-serve (Integrations/serve, its own package) beside badgeflow: `badgeflow serve` runs it.
install-serve: deps
	cd Integrations/serve && $(SWIFT) build -c release --product badgeflow-serve
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 755 Integrations/serve/.build/release/badgeflow-serve "$(DESTDIR)$(PREFIX)/bin/badgeflow-serve"

# `make install` into a fresh folder: the binary runs and `man -l` renders the page, with its
# characters intact: GenerateManual drops every non-ASCII character (an ellipsis became
# nothing: `"payload":{}`), so the help texts are ASCII and the rendered page must show them.
install-check: man-deps
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	$(MAKE) --no-print-directory install PREFIX="$$d" >/dev/null && \
	"$$d/bin/badgeflow" --version && \
	MANWIDTH=80 man -l "$$d/share/man/man1/badgeflow.1" > "$$d/man.txt" 2>&1 && \
	grep -q '^NAME' "$$d/man.txt" && grep -q -- '--files-from' "$$d/man.txt" && \
	tr -s ' \n' '  ' < "$$d/man.txt" > "$$d/man.flat" && \
	{ grep -q -F '"payload":{...}}' "$$d/man.flat" && grep -q -F '"tree":[...]' "$$d/man.flat" && \
	  ! LC_ALL=C grep -q -P '[^\x00-\x7F]' "$$d/share/man/man1/badgeflow.1" && \
	  ! "$$d/bin/badgeflow" --experimental-dump-help | LC_ALL=C grep -q -P '[^\x00-\x7F]' || \
	  { echo "install-check: the man page lost characters (GenerateManual keeps ASCII only; keep help texts ASCII)"; exit 1; }; } && \
	echo "install-check: $$d/bin/badgeflow and man -l $$d/share/man/man1/badgeflow.1 ($$(wc -l < "$$d/man.txt") lines) ok"

# DocC archives of both libraries (swift-docc-plugin), in .build/plugins/Swift-DocC/outputs/.
# Fails on any documentation warning (a broken symbol link, an undocumented parameter).
docs: deps
	@mkdir -p .build; for t in BadgeTree BadgeFlow; do \
	  $(SWIFT) package generate-documentation --target $$t > .build/docs-$$t.log 2>&1 || { cat .build/docs-$$t.log; exit 1; }; \
	  if grep -q 'warning:' .build/docs-$$t.log; then grep -A8 'warning:' .build/docs-$$t.log; echo "make docs: $$t has documentation warnings"; exit 1; fi; \
	  tail -n 2 .build/docs-$$t.log; \
	done

# swift-format (shipped with the toolchain) in lint mode with the checked-in .swift-format; no
# two paths that differ only by case; pointer code only in files named for it (+Unsafe, System,
# the C bindings); README.md within 300 lines and every relative link in it (and in Benchmarks/
# and Integrations/spark/ READMEs) resolving.
lint:
	Scripts/check-case-collisions.sh
	Scripts/check-unsafe-boundaries.sh
	Scripts/check-core-io.sh
	Scripts/check-readme-links.sh
	$(SWIFT) format lint --strict --recursive --parallel Sources Tests Package.swift Integrations/serve/Sources Integrations/serve/Tests Integrations/serve/Package.swift

# The Spark job's driver and task code without Spark (Integrations/spark/test_badgeflow_spark.py),
# then partitioned runs on Apache Spark (local[2]: the quick start of Integrations/spark/README.md over ~200k generated
# lines, a directory of hourly files, --overwrite) whose results merged by seq must be
# byte-identical to one `badgeflow filter` run, and whose summary.json must equal a recount.
# Installs Java (Debian openjdk-17-jre-headless) and pyspark (PyPI) when missing. ALL_AT=1: a
# stream whose events all carry `at`; LINES, SEED: the stream; PROFILE=1: time each Spark phase.
spark-test: deps
	Integrations/spark/spark_test.sh

# `badgeflow-serve` (Integrations/serve, a package of its own on Hummingbird 2): builds it and
# its tests (a first build compiles Hummingbird and SwiftNIO, ~3-5 min on 2 cores), runs them
# against the root package's `badgeflow`, and checks the systemd unit with `systemd-analyze
# verify` (its ExecStart pointed at the binary just built; systemd is installed when missing).
serve-deps:
	@command -v systemd-analyze >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq systemd >/dev/null)

serve-test: deps serve-deps
	$(SWIFT) build --product badgeflow $(SWIFTFLAGS)
	cd Integrations/serve && $(SWIFT) build --build-tests $(SWIFTFLAGS)
	cd Integrations/serve && BADGEFLOW_BIN=$(CURDIR)/$(BIN) $(SWIFT) test --skip-build
	Scripts/serve-subcommand-test.sh $(BIN) Integrations/serve/.build/debug/badgeflow-serve
	@unit=$$(mktemp -d) && \
	  sed "s|/usr/local/bin/badgeflow-serve|$(CURDIR)/Integrations/serve/.build/debug/badgeflow-serve|" \
	    Integrations/serve/badgeflow-serve.service > $$unit/badgeflow-serve.service && \
	  systemd-analyze verify $$unit/badgeflow-serve.service && rm -rf $$unit && \
	  echo "systemd-analyze verify Integrations/serve/badgeflow-serve.service: ok"

# `badgeflow serve` under wrk while a filter writes a 1M-account RocksDB state
# (Benchmarks/scripts/bench_serve.sh; ACCOUNTS, FLEET_LINES, RATE, PAIRS). Not a test: figures.
bench-serve: deps
	@command -v wrk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq wrk >/dev/null)
	$(SWIFT) build -c release --product badgeflow
	cd Integrations/serve && $(SWIFT) build -c release --product badgeflow-serve
	Benchmarks/scripts/bench_serve.sh $(or $(ACCOUNTS),1000000) $(or $(FLEET_LINES),2000000)

demo: deps
	@$(SWIFT) build --product badgeflow >/dev/null
	@echo '$$ badgeflow filter --state /tmp/badgeflow-demo.json Fixtures/scenarios/demo.ndjson'
	@rm -f /tmp/badgeflow-demo.json
	@$(BIN) filter --state /tmp/badgeflow-demo.json Fixtures/scenarios/demo.ndjson
	@echo
	@echo '$$ badgeflow tree --state /tmp/badgeflow-demo.json'
	@$(BIN) tree --state /tmp/badgeflow-demo.json
	@echo
	@$(BIN) report -o /tmp/badgeflow-demo-report.html Fixtures/scenarios/demo.ndjson 2>/dev/null
	@echo "report: /tmp/badgeflow-demo-report.html (make report-demo also takes its screenshot)"

# `badgeflow report` in headless Chromium: the reports of the scenario fixtures and of a
# generated day open with no console message, and the figures read back from the DOM are the
# filter's and the final state's (Scripts/report-browser-test.sh).
browser-test: deps browser-deps
	@$(SWIFT) build --product badgeflow >/dev/null
	Scripts/report-browser-test.sh $(BIN)

# The demo's report (Fixtures/scenarios/demo.ndjson, as `make demo` writes it) and a screenshot of it taken with the
# same browser; the screenshot is the DocC article's (Sources/BadgeFlow/BadgeFlow.docc/Resources).
REPORT_DEMO ?= /tmp/badgeflow-demo-report.html
report-demo: deps browser-deps
	@$(SWIFT) build --product badgeflow >/dev/null
	@echo '$$ badgeflow report -o $(REPORT_DEMO) Fixtures/scenarios/demo.ndjson'
	@$(BIN) report -o $(REPORT_DEMO) Fixtures/scenarios/demo.ndjson
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$$d" \
	  --hide-scrollbars --window-size=1100,2400 --screenshot="$$d/shot.png" "file://$$(realpath $(REPORT_DEMO))" >/dev/null 2>&1 && \
	cp "$$d/shot.png" Sources/BadgeFlow/BadgeFlow.docc/Resources/report-demo.png
	@echo "report: $(REPORT_DEMO)"
	@echo "screenshot: Sources/BadgeFlow/BadgeFlow.docc/Resources/report-demo.png"

# The peers the benchmark compares against: jq (Debian) and orjson (PyPI).
bench-deps:
	@if ! command -v jq >/dev/null 2>&1; then \
	  echo "make: installing jq"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq jq >/dev/null; \
	fi
	@python3 -c 'import orjson' 2>/dev/null || { echo "make: installing orjson"; python3 -m pip install -q orjson; }

bench: deps bench-deps
	$(SWIFT) build -c release --product badgeflow
	Benchmarks/scripts/bench.sh $(LINES)
	Benchmarks/scripts/bench_batch.sh

# Instructions a line of `filter --jobs 1` under callgrind on the 100k-line bench stream, with and
# without start-up (Benchmarks/scripts/callgrind_line.sh; RUNS, LINES). Installs valgrind when missing.
bench-callgrind: deps
	$(SWIFT) build -c release --product badgeflow
	Benchmarks/scripts/callgrind_line.sh $(RBIN)

# CI's cost check: instructions a line of `filter --jobs 1` under callgrind (one run, start-up
# included, deterministic up to json-c's per-process hash seed) must not exceed the threshold in
# Benchmarks/Thresholds/instructions-per-line.json (measured + 2%). Re-record on purpose only:
# Benchmarks/scripts/callgrind_check.sh --record. Installs valgrind when missing.
bench-check: deps
	$(SWIFT) build -c release --product badgeflow
	Benchmarks/scripts/callgrind_check.sh $(RBIN)

# Sanitizer runs of the whole test suite, each in its own build folder.
# Sanitizers bring their own allocator: these builds leave out mimalloc (the package's
# default Mimalloc trait), whose memory LeakSanitizer would not scan.
check: deps
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan --disable-default-traits
	LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan.supp $(SWIFT) test --skip-build --sanitize=address \
	  --scratch-path .build-asan --disable-default-traits
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan --disable-default-traits
	# One test at a time under TSan: its slow, blocking process tests (kill -9 rounds) would
	# otherwise hold both threads of a 2-core machine's Swift concurrency pool, and the async
	# BadgeCenter tests beside them ran out of their time limit waiting (seen under load).
	$(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan --disable-default-traits --no-parallel
	$(MAKE) leaks

# valgrind over `filter` on every fixture stream: nothing definitely lost. The executable links
# mimalloc, so valgrind is told to track its malloc/free as it tracks glibc's (--soname-synonyms).
# .ci/valgrind.supp: librocksdb's own static data (mismatched frees valgrind reports as it loads).
leaks: deps
	@command -v valgrind >/dev/null 2>&1 || { SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq valgrind >/dev/null; }
	$(SWIFT) build --product badgeflow
	@for f in Fixtures/scenarios/*.ndjson; do \
	  case $$f in *.expected.ndjson) continue;; esac; \
	  valgrind -q --soname-synonyms=somalloc='libmimalloc.so*' --suppressions=.ci/valgrind.supp \
	    --leak-check=full --show-leak-kinds=definite \
	    --errors-for-leak-kinds=definite --error-exitcode=9 \
	    $(BIN) filter --jobs 2 $$f > /dev/null || { echo "leak or memory error: $$f"; exit 1; }; \
	done; echo "valgrind: no definite leaks in filter over Fixtures/scenarios"

# libFuzzer over the line processor, seeded from Fixtures/; FUZZ_TIME seconds (default 60).
# Crashes land in Fuzz/crashes/: turn each into a regression fixture under Fixtures/regressions/.
FUZZ_TIME ?= 60
fuzz: deps
	cd Fuzz && $(SWIFT) build -c release -Xswiftc -sanitize=fuzzer,address
	mkdir -p Fuzz/corpus Fuzz/crashes
	Fuzz/.build/release/badgeflow-fuzz -max_total_time=$(FUZZ_TIME) -max_len=8192 -timeout=10 \
	  -artifact_prefix=Fuzz/crashes/ -print_final_stats=1 Fuzz/corpus Fixtures/scenarios Fixtures/payloads/valid Fixtures/payloads/invalid

clean:
	rm -rf .build .build-asan .build-tsan Benchmarks/.build Fuzz/.build

# Fleet figures (Benchmarks/scripts/bench_fleet.sh): 1M accounts with 3 marks each, 2M events;
# lines/s and peak RSS with no state, a JSON state and SQLite with --max-resident 100000.
ACCOUNTS ?= 1000000
FLEET_LINES ?= 2000000
RESIDENT ?= 100000
HOT ?= 0
# librocksdb-dev (RocksDB states and the floor program Benchmarks/scripts/rocksdb_floor.c)
# comes with `make deps`; the target stays for scripts that name it.
bench-fleet-deps: deps

bench-fleet: deps
	$(SWIFT) build -c release --product badgeflow
	Benchmarks/scripts/bench_fleet.sh $(ACCOUNTS) $(FLEET_LINES) $(RESIDENT) $(HOT)

# Library inner loops (tree, analyzer, apply) with package-benchmark: figures, not a test.
# Figures are per operation (columns marked *); in benchmark 1.38.1 `--scale` turns that
# off and shows each iteration's 1,000 operations. --no-progress keeps a log without a
# terminal readable. Mallocs are counted by the package's own interposer (LD_PRELOAD), so
# it needs no Debian package of its own (no jemalloc); its warning about the Swift runtime interposer and the
# note that it was not built are expected (see Benchmarks/Package.swift).
bench-lib: deps
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark --no-progress
