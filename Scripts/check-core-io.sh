#!/usr/bin/env bash
# Fails when the per-line core (Sources/BadgeFlow/Stream: BadgeStream and its ops) reaches
# for I/O: a store (AccountSource and its reads), files, threads, locks or the clock. The
# core applies lines to what it holds; the pipeline (Sources/BadgeFlow/Pipeline) reads the
# store before the lines that need it, and owns every thread and handle.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='AccountSource|AccountLoader|StateStore|StoreConnection|SQLite|RocksDB|\.loadAccount\(|\.loadAccounts\(|\.readAccounts\(|\.accountsDue\(|\.forEachStoredAccount\(|FileIO|MappedFile|System\.|OwnedThread|Worker[<(]|ScanPool|Locked[<(]|import Glibc|import Darwin|import Foundation|clock_gettime|Date\(\)'
# Doc comments may name what the core does not do; System.memchr is a byte search, not I/O.
if grep -nE "$pattern" Sources/BadgeFlow/Stream --include='*.swift' -r | grep -vE '^[^:]+:[0-9]+:\s*///' |
  grep -vE 'System\.memchr\(' | grep .; then
  echo "error: the per-line core above reaches for I/O; read in the pipeline and hand it over (StoreScan)" >&2
  exit 1
fi
echo "the per-line core does no I/O ($(find Sources/BadgeFlow/Stream -name '*.swift' | wc -l) files)"
