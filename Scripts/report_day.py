#!/usr/bin/env python3
"""A support desk's day for `badgeflow report`: ACCOUNTS accounts with 1-3 devices, LINES lines,
with what support gets tickets about planted in it.

usage: report_day.py ACCOUNTS LINES [SEED] > day.ndjson

Like Benchmarks/scripts/gen_fleet.py (a first push to every account, then events on accounts
drawn at random, `at` rising one second every 10 lines), plus: pushes carry an `id` and about
1% are sent again with an id already used (duplicates); about 0.3% of lines are rejected
(a `set` whose count is a string, a `clear` without its path) and name their account; about
0.5% are logouts and 0.5% unregisters (a device leaving, often while it shows a number); some
reads are made on the web (an account and no device); every tenth line's `at` is RFC 3339 text.
"""
import random
import sys
import time

accounts = int(sys.argv[1])
lines = int(sys.argv[2])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
t0 = 1795500000  # 2026-11-24T06:00:00Z
out = sys.stdout
buf = []
sent = {}  # account -> recent ids


def at(i):
    t = t0 + i // 10
    if i % 10 == 3:
        return '"%s"' % time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
    return str(t)


for i in range(lines):
    a = i if i < accounts else rng.randrange(accounts)
    dev = "d%d" % (0 if i < accounts else rng.randrange(3))
    acct = "acct-%d" % a
    r = rng.random() if i >= accounts else -1
    when = at(i)
    if r < 0.45:
        ids = sent.setdefault(a, [])
        if ids and rng.random() < 0.022:
            mid = rng.choice(ids)
        else:
            mid = "m%d" % i
            ids.append(mid)
            del ids[:-8]
        kind = rng.randrange(3) if i >= accounts else i % 3
        if kind == 0:
            aps = '{"alert":"hi","thread-id":"t%d"}' % rng.randrange(5)
        elif kind == 1:
            aps = '{"alert":"mail","category":"mail"}'
        else:
            aps = '{"alert":"sale"},"promo":{"campaign":"c1"}'
        line = '{"op":"push","account":"%s","device":"%s","id":"%s","at":%s,"payload":{"aps":%s}}' % (acct, dev, mid, when, aps)
    elif r < 0.62:
        line = '{"op":"clear","account":"%s","device":"%s","at":%s,"path":"root.chat.t%d"}' % (acct, dev, when, rng.randrange(5))
    elif r < 0.67:
        line = '{"op":"clear","account":"%s","at":%s,"path":"root.inbox"}' % (acct, when)
    elif r < 0.75:
        line = '{"op":"set","account":"%s","device":"%s","at":%s,"path":"root.inbox","count":%d}' % (acct, dev, when, rng.randrange(1, 9))
    elif r < 0.85:
        line = '{"op":"login","account":"%s","device":"%s","at":%s}' % (acct, dev, when)
    elif r < 0.9015:
        line = '{"op":"tick","account":"%s","device":"%s","at":%s}' % (acct, dev, when)
    elif r < 0.9065:
        line = '{"op":"logout","account":"%s","device":"%s","at":%s}' % (acct, dev, when)
    elif r < 0.9115:
        line = '{"op":"unregister","account":"%s","device":"%s","at":%s}' % (acct, dev, when)
    elif r < 0.913:
        line = '{"op":"set","account":"%s","device":"%s","at":%s,"path":"root.inbox","count":"3"}' % (acct, dev, when)
    elif r < 0.9145:
        line = '{"op":"clear","account":"%s","device":"%s","at":%s}' % (acct, dev, when)
    else:
        line = '{"op":"foreground","account":"%s","device":"%s","at":%s}' % (acct, dev, when)
    buf.append(line)
    if len(buf) >= 10000:
        out.write("\n".join(buf) + "\n")
        buf = []
if buf:
    out.write("\n".join(buf) + "\n")
