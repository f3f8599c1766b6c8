#!/usr/bin/env python3
"""gate-suite.py [BIN] -- counts what `badgeflow validate` makes of Fixtures/gate-suite/.

valid/: every payload must come out valid with no warning its validate.json does not allow
(anything else is a false error). defects/: each file must get the diagnostic defects.tsv
lists for it (severity, code and pointer; caught), else it is missed. Prints the counts and
exits 1 when anything was missed or falsely flagged. BIN defaults to .build/debug/badgeflow.
"""
import csv, json, os, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, ".build/debug/badgeflow")
suite = os.path.join(root, "Fixtures/gate-suite")


def run(folder):
    p = subprocess.run([binary, "validate", "--json", folder], capture_output=True, text=True)
    return {os.path.relpath(r["file"], folder): r for r in map(json.loads, p.stdout.splitlines())}


valid = run(os.path.join(suite, "valid"))
false_errors = []
for name, r in sorted(valid.items()):
    bad = [d for d in r["diagnostics"] if d["severity"] == "error" or not d.get("allowed")]
    if bad:
        false_errors.append((name, bad))
types = sorted({r.get("push-type", "alert") for r in valid.values()})

defects = run(os.path.join(suite, "defects"))
with open(os.path.join(suite, "defects/defects.tsv")) as f:
    planted = list(csv.DictReader(f, delimiter="\t"))
caught, missed = [], []
for row in planted:
    r = defects.get(row["file"])
    got = {f'{d["severity"]}:{d["code"]}@{d["at"]}' for d in (r or {}).get("diagnostics", [])}
    (caught if row["expected"] in got else missed).append((row["file"], row["expected"], sorted(got)))

print(f"valid payloads: {len(valid)} across {len(types)} push types ({', '.join(types)}); false errors: {len(false_errors)}")
print(f"planted defects: {len(planted)}; caught: {len(caught)}; missed: {len(missed)}")
for name, bad in false_errors:
    print(f"  false: {name}: {bad}")
for name, want, got in missed:
    print(f"  missed: {name}: want {want}, got {got}")
sys.exit(1 if missed or false_errors else 0)
