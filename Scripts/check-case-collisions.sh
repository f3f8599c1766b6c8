#!/usr/bin/env bash
# Fails when two tracked paths (files or the folders that hold them) differ only by case:
# a Mac's default case-insensitive disk would make them one, and the package would not
# clone and build as laid out. Every prefix of every `git ls-files` path is folded to
# lower case; a folded prefix that stands for two different spellings is a collision.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z | tr '\0' '\n' | awk '
  {
    n = split($0, part, "/"); prefix = ""
    for (i = 1; i <= n; i++) {
      prefix = (i == 1) ? part[1] : prefix "/" part[i]
      folded = tolower(prefix)
      if (folded in seen && seen[folded] != prefix) {
        key = seen[folded] " and " prefix
        if (!(key in told)) { print "case collision: " key; told[key] = 1; bad = 1 }
      } else seen[folded] = prefix
    }
  }
  END { exit bad }
' || { echo "error: paths above differ only by case (one folder on a case-insensitive disk)" >&2; exit 1; }
echo "no tracked paths differ only by case ($(git ls-files | wc -l) files)"
