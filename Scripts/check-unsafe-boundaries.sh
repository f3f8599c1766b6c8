#!/usr/bin/env bash
# Fails when a Swift file under Sources/ works with pointers (Unsafe*Pointer, withUnsafe*,
# unsafeBitCast, unsafeAddress, Unmanaged) and is not named for it: pointer code lives in
# `Type+Unsafe.swift` (an extension of the type it serves), `_Unsafe*.swift`, or a
# `System*.swift` file of system calls, so a reviewer finds every pointer in a file whose name
# says so. Comment lines do not count. The files listed below are boundaries of their own (C
# bindings, the input buffer); each `exempt` entry allows one parameter shape in some files.
#
# Also fails when a Swift file under Sources/ imports the C library (Glibc, Musl, Darwin) and
# is not one of the system files listed in `imports_c` below: the other files call it through
# their module's system layer (`System`, `FileIO`).
set -euo pipefail
cd "$(dirname "$0")/.."

pattern='Unsafe(Mutable)?(Raw)?(Buffer)?Pointer|withUnsafe|unsafeBitCast|unsafeAddress|Unmanaged'

# Whole files allowed to hold pointer code under another name.
allowed=(
    # C bindings: the file is the boundary (SQLite, RocksDB, json-c's parser and values, mmap).
    Sources/BadgeFlow/State/SQLite/SQLiteConnection.swift
    Sources/BadgeFlow/State/SQLite/SQLiteStore.swift
    Sources/BadgeFlow/State/RocksDB/RocksDBStore.swift
    Sources/BadgeFlow/JSON/JSONParser.swift
    Sources/BadgeFlow/JSON/JSONRef.swift
    Sources/BadgeFlow/IO/MappedFile.swift
    # The input's buffer: the reader owns one raw buffer and lends each line out as a slice of it.
    Sources/BadgeFlow/Pipeline/LineReader.swift
)

# Parameters allowed outside those files, as "path prefix|extended regex": a borrowed buffer
# handed on through a signature, with no pointer work in the function. A line passes when,
# with every match of the regex taken out, it no longer matches the pattern above.
exempt=(
    # An event op's entry point gets the line it was read from; ops read it through JSONRef.
    'Sources/BadgeFlow/Stream/Ops/|line: UnsafeRawBufferPointer, by analyzer: LineAnalyzer'
    # The checker gets the payload's text only to hand it to PayloadValidator.compactCount.
    'Sources/BadgeFlow/Payload/PayloadChecker.swift|text: UnsafeRawBufferPointer\?'
)

# The files allowed to import the C library: each module's system layer.
imports_c=(
    # BadgeTree: its system file and the shared file's I/O and locks.
    Sources/BadgeTree/System.swift
    Sources/BadgeTree/BadgeCenter+SharedFile.swift
    Sources/BadgeTree/Locked+Unsafe.swift
    Sources/BadgeTree/SharedFileFormat.swift
    Sources/BadgeTree/SharedFileFormat+Unsafe.swift
    # BadgeFlow: IO/ (the system calls) and the C-binding stores.
    Sources/BadgeFlow/IO/System.swift
    Sources/BadgeFlow/IO/FileIO.swift
    Sources/BadgeFlow/IO/FileIO+Unsafe.swift
    Sources/BadgeFlow/IO/MappedFile.swift
    Sources/BadgeFlow/IO/OwnedThread.swift
    Sources/BadgeFlow/IO/OwnedThread+Unsafe.swift
    Sources/BadgeFlow/IO/SignalWake.swift
    Sources/BadgeFlow/IO/SignalWake+Unsafe.swift
    Sources/BadgeFlow/IO/StateLock.swift
    Sources/BadgeFlow/IO/ResultsFile.swift
    Sources/BadgeFlow/State/SQLite/SQLiteStore.swift
    Sources/BadgeFlow/State/RocksDB/RocksDBStore.swift
    # badgeflow: its system file.
    Sources/BadgeFlowCLI/System+CLI.swift
)

named() {
    case "${1##*/}" in
        *+Unsafe.swift | _Unsafe*.swift | System*.swift) return 0 ;;
    esac
    local f
    for f in "${allowed[@]}"; do [ "$f" = "$1" ] && return 0; done
    return 1
}

exempted() {  # file, line text
    local e
    for e in "${exempt[@]}"; do
        case "$1" in
            "${e%%|*}"*) printf '%s\n' "$2" | sed -E "s/${e#*|}//g" | grep -qE "$pattern" || return 0 ;;
        esac
    done
    return 1
}

bad=0
checked=0
while IFS= read -r file; do
    checked=$((checked + 1))
    named "$file" && continue
    while IFS=: read -r line text; do
        exempted "$file" "$text" && continue
        echo "$file:$line: pointer code outside a file named for it: $(printf '%s' "$text" | sed 's/^ *//')"
        bad=1
    done < <(grep -nE "$pattern" "$file" | grep -vE '^[0-9]+:[[:space:]]*//' || true)
done < <(find Sources -name '*.swift' | LC_ALL=C sort)

importers=0
while IFS= read -r file; do
    importers=$((importers + 1))
    allowed_import=0
    for f in "${imports_c[@]}"; do [ "$f" = "$file" ] && allowed_import=1; done
    [ "$allowed_import" -eq 1 ] && continue
    echo "$file: imports the C library outside the system files: call it through System (or FileIO)"
    bad=1
done < <(grep -lE '^[[:space:]]*import[[:space:]]+(Glibc|Musl|Darwin)\b' $(find Sources -name '*.swift' | LC_ALL=C sort) || true)

if [ "$bad" -ne 0 ]; then
    echo "error: move the lines above into Type+Unsafe.swift (an extension of the same type), or a System*.swift file of system calls (or IO/ for BadgeFlow)" >&2
    exit 1
fi
for f in "${allowed[@]}" "${imports_c[@]}"; do
    [ -f "$f" ] || { echo "error: allowlisted $f does not exist; drop it from $0" >&2; exit 1; }
done
echo "pointer code only in files named for it ($checked Swift files under Sources)"
echo "the C library imported only by the ${#imports_c[@]} system files allowed ($importers import it)"
