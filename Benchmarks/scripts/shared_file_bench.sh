#!/bin/sh
# The shared file's cost per change (release), this checkout against another commit's
# BadgeTree: each build is BadgeTree's sources and shared_file_bench.swift in one module.
#   Benchmarks/scripts/shared_file_bench.sh [BASE-COMMIT]     (default: the commit before
#   the journal, a3b8162, whose withSharedFile rewrote the whole file on every change)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
base=${1:-a3b8162}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build() { # NAME SOURCE-DIR
    mkdir -p "$work/$1"
    cp "$root/Benchmarks/scripts/shared_file_bench.swift" "$work/$1/main.swift"
    swiftc -O -swift-version 6 -package-name BadgeFlow -module-name SharedFileBench -o "$work/$1/bench" "$2"/*.swift "$work/$1/main.swift"
}
mkdir -p "$work/base-src"
git -C "$root" archive "$base" Sources/BadgeTree | tar -x -C "$work/base-src"
build journal "$root/Sources/BadgeTree"
build rewrite "$work/base-src/Sources/BadgeTree"
mkdir -p "$work/files"
"$work/rewrite/bench" "rewrite($base)" "$work/files"
"$work/journal/bench" journal "$work/files"
