#!/usr/bin/env python3
"""Checks Schemas/rules.schema.json (JSON Schema draft 2020-12) against the rules compiler.

- the schema is a valid draft 2020-12 schema;
- every rules file in the repository (Fixtures/rules/*.json, every *.rules.json and rules.json
  under Fixtures/, and the JSON examples of the DocC article RulesFile.md that are whole
  files) is accepted by the schema and by `badgeflow rules --check`;
- every file in Fixtures/rules/refused/ is refused by `badgeflow rules --check` (exit 2) and
  by the schema: a file the compiler refuses for its shape is one the schema refuses.

Usage: check-rules-schema.py BADGEFLOW  (run from the repository root)
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

from jsonschema import Draft202012Validator

badgeflow = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/badgeflow"
schema = json.load(open("Schemas/rules.schema.json"))
Draft202012Validator.check_schema(schema)
validator = Draft202012Validator(schema)
failures = []


def compiler_accepts(path):
    r = subprocess.run([badgeflow, "rules", "--check", path], capture_output=True, text=True)
    if r.returncode not in (0, 2):
        failures.append(f"{path}: badgeflow rules --check exited {r.returncode}: {r.stderr.strip()}")
    return r.returncode == 0


accepted = sorted(set(
    [f for f in glob.glob("Fixtures/rules/*.json")]
    + glob.glob("Fixtures/**/*.rules.json", recursive=True)
    + glob.glob("Fixtures/**/rules.json", recursive=True)))
# Whole rules files shown in the DocC article (a block that starts with {"version"…).
with tempfile.TemporaryDirectory() as tmp:
    article = open("Sources/BadgeFlow/BadgeFlow.docc/RulesFile.md").read()
    for i, block in enumerate(re.findall(r"```json\n(.*?)```", article, re.S)):
        if '"version"' in block:
            path = os.path.join(tmp, f"RulesFile.md-example-{i}.json")
            open(path, "w").write(block)
            accepted.append(path)
    for path in accepted:
        doc = json.load(open(path))
        errors = [f"{'/' + '/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
        if errors:
            failures.append(f"{path}: the schema refuses a rules file: {errors[0]}")
        if not compiler_accepts(path):
            failures.append(f"{path}: badgeflow rules --check refuses it")

refused = sorted(glob.glob("Fixtures/rules/refused/*.json"))
for path in refused:
    doc = json.load(open(path))
    if compiler_accepts(path):
        failures.append(f"{path}: badgeflow rules --check accepts a file listed as refused")
    if validator.is_valid(doc):
        failures.append(f"{path}: the compiler refuses it but the schema accepts it")

for f in failures:
    print("check-rules-schema: " + f, file=sys.stderr)
if failures:
    sys.exit(1)
print(f"check-rules-schema: {len(accepted)} rules files accepted, {len(refused)} refused shapes refused, by schema and compiler alike")
