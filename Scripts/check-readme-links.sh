#!/usr/bin/env bash
# Fails when README.md is longer than 300 lines (it is the front door; reference goes into the
# DocC articles) or when a Markdown link in it, in Benchmarks/README.md or in
# Integrations/spark/README.md points at nothing. A relative link must name a tracked file or
# folder of the repository (resolved from the linking file's folder, staying inside the
# repository), and its #fragment, if any, a heading of the Markdown file it names (GitHub's
# anchors: lower case, punctuation dropped, spaces to hyphens). README.md links only to files
# in the repository: an http(s) link there fails too. Links inside code blocks and code spans
# are not links. Untracked files count as missing, as they would on a clone.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - README.md Benchmarks/README.md Integrations/spark/README.md <<'PY'
import os, re, subprocess, sys

MAX_LINES = 300
tracked = set(subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True,
                             text=True).stdout.split("\0")) - {""}
folders = {os.path.dirname(p) for p in tracked}
for p in list(folders):
    while p:
        p = os.path.dirname(p)
        folders.add(p)

def prose(text):
    """The text without fenced code blocks and code spans, one entry per line (numbers kept)."""
    out, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"\s*(```+|~~~+)", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append("")
            continue
        if m:
            fence = m.group(1)
            out.append("")
            continue
        out.append(re.sub(r"(`+)(?:(?!\1).)+?\1", "", line))
    return out

def anchors(path):
    """GitHub's heading anchors of a Markdown file."""
    seen, result = {}, set()
    text = open(path, encoding="utf-8").read()
    fence = False
    for line in text.split("\n"):
        if re.match(r"\s*```", line):
            fence = not fence
            continue
        m = None if fence else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).replace("`", "").lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        result.add(slug if n == 0 else f"{slug}-{n}")
    return result

link = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
bad, readme_lines = [], 0
for md in sys.argv[1:]:
    if not os.path.exists(md):
        continue
    text = open(md, encoding="utf-8").read()
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if md == "README.md":
        readme_lines = lines
    if md == "README.md" and lines > MAX_LINES:
        bad.append(f"README.md: {lines} lines, more than {MAX_LINES}: move reference into the DocC articles")
    for number, line in enumerate(prose(text), 1):
        for target in link.findall(line):
            where = f"{md}:{number}: ({target})"
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                if md == "README.md":
                    bad.append(f"{where}: not a relative link to a file in the repository")
                continue
            path, _, fragment = target.partition("#")
            if path:
                resolved = os.path.normpath(os.path.join(os.path.dirname(md), path))
                if resolved.startswith("..") or os.path.isabs(path):
                    bad.append(f"{where}: outside the repository")
                    continue
                if resolved not in tracked and resolved not in folders:
                    bad.append(f"{where}: no such tracked file or folder: {resolved}")
                    continue
            else:
                resolved = md
            if fragment and resolved.endswith(".md") and resolved in tracked:
                if fragment.lower() not in anchors(resolved):
                    bad.append(f"{where}: no heading #{fragment} in {resolved}")
for b in bad:
    print(b, file=sys.stderr)
if bad:
    sys.exit(1)
checked = ", ".join(m for m in sys.argv[1:] if os.path.exists(m))
print(f"check-readme-links: README.md {readme_lines} lines (at most {MAX_LINES}); links in {checked} resolve")
PY
