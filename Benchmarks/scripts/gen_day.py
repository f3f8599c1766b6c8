#!/usr/bin/env python3
"""gen_day.py LINES ACCOUNTS OUTDIR [--seed N] -- a day of a fleet with per-account mutes.

Writes OUTDIR/rules-before.json, OUTDIR/rules-after.json (friend requests muted in the
rules: many totals drop at once), OUTDIR/day-1.ndjson (the first half) and OUTDIR/day-2.ndjson
(a fleet-wide {"op":"reconcile"} first, the second half, and a fleet-wide reconcile last).
Events: chat pushes to one device, friend pushes to the whole account, silent reads, clears
with ids, account-level clears, mutes and unmutes ({"op":"contribute"}, modes none/dot and
count/rules), logins, and devices reporting what they show. Run the halves with
`badgeflow filter --state S --rules rules-before.json day-1.ndjson` and then
`--rules rules-after.json day-2.ndjson`, and check with check_day.py.
"""
import argparse
import json
import os
import random

RULES = {
    "version": 1, "root": "root",
    "contribute": {"root.chat.bots": "dot"},
    "rules": [
        {"name": "chat", "match": {"/type": "chat"}, "path": "root.chat.{/thread}", "action": "increment"},
        {"name": "friend", "match": {"/type": "friend"}, "path": "root.discover.friends", "action": "increment"},
        {"name": "read", "match": {"/type": "read"}, "path": "root.chat.{/thread}", "action": "clear"},
    ],
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("lines", type=int)
    p.add_argument("accounts", type=int)
    p.add_argument("outdir")
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    r = random.Random(a.seed)
    os.makedirs(a.outdir, exist_ok=True)
    with open(os.path.join(a.outdir, "rules-before.json"), "w") as f:
        json.dump(RULES, f, indent=1)
    after = json.loads(json.dumps(RULES))
    after["contribute"]["root.discover.friends"] = "none"
    with open(os.path.join(a.outdir, "rules-after.json"), "w") as f:
        json.dump(after, f, indent=1)
    threads = ["bob", "amy", "bots", "team"]
    devices = ["phone", "ipad", "mac"]
    out = []
    for i in range(a.lines):
        acc = "u%d" % r.randrange(a.accounts)
        d = devices[r.randrange(3 if r.randrange(4) == 0 else 1)]
        t = r.choice(threads)
        k = r.randrange(20)
        if k < 8:
            e = {"op": "push", "account": acc, "device": d, "at": i, "payload": {"aps": {"alert": "m"}, "type": "chat", "thread": t}}
        elif k < 10:
            e = {"op": "push", "account": acc, "at": i, "payload": {"aps": {"alert": "f"}, "type": "friend"}}
        elif k == 10:
            e = {"op": "push", "account": acc, "device": d, "at": i, "push-type": "background",
                 "payload": {"aps": {"content-available": 1}, "type": "read", "thread": t}}
        elif k < 14:
            e = {"op": "clear", "account": acc, "device": d, "at": i, "path": "root.chat." + t, "id": "c%d" % i}
        elif k == 14:
            e = {"op": "clear", "account": acc, "at": i, "path": "root.discover.friends"}
        elif k < 17:
            e = {"op": "contribute", "account": acc, "device": d, "at": i, "path": "root.chat." + t,
                 "mode": r.choice(["none", "dot"]), "id": "m%d" % i}
        elif k == 17:
            e = {"op": "contribute", "account": acc, "device": d, "at": i, "path": "root.chat." + t,
                 "mode": r.choice(["count", "rules"]), "id": "m%d" % i}
        elif k == 18:
            e = {"op": "login", "account": acc, "device": d, "at": i}
        else:
            e = {"op": "reconcile", "account": acc, "device": d, "badge": r.randrange(3)}
        out.append(json.dumps(e, separators=(",", ":")))
    half = len(out) // 2
    with open(os.path.join(a.outdir, "day-1.ndjson"), "w") as f:
        f.write("\n".join(out[:half]) + "\n")
    with open(os.path.join(a.outdir, "day-2.ndjson"), "w") as f:
        f.write('{"op":"reconcile"}\n' + "\n".join(out[half:]) + '\n{"op":"reconcile"}\n')


if __name__ == "__main__":
    main()
