#!/usr/bin/env python3
"""A fleet event stream: ACCOUNTS accounts with 1-3 devices each, LINES lines.

Usage: gen_fleet.py ACCOUNTS LINES [SEED] [HOT] > fleet.ndjson

HOT (default 0): the share of events (after the first pass) that go to the busiest 5% of
accounts; the rest are drawn from all accounts.

The first ACCOUNTS lines push once to every account (so each ends up with ~3 marks: chat,
inbox and a dot); the rest are pushes, clears, sets, logins and ticks on accounts drawn
uniformly at random, with `at` rising one second every 1000 lines.
"""
import random
import sys

accounts = int(sys.argv[1])
lines = int(sys.argv[2])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
hot = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
busiest = max(1, accounts // 20)
out = sys.stdout
t0 = 1732269600
buf = []
for i in range(lines):
    if i < accounts:
        a = i
    elif rng.random() < hot:
        a = rng.randrange(busiest)
    else:
        a = rng.randrange(accounts)
    dev = "d%d" % (a % 3 if i >= accounts else 0)
    at = t0 + i // 1000
    r = rng.random() if i >= accounts else -1
    if r < 0.5:
        kind = i % 3 if i < accounts else rng.randrange(3)
        if kind == 0:
            aps = '{"alert":"hi","thread-id":"t%d"}' % (a % 7)
            extra = ''
        elif kind == 1:
            aps = '{"alert":"mail","category":"mail"}'
            extra = ''
        else:
            aps = '{"alert":"sale"}'
            extra = ',"promo":{"campaign":"c%d"}' % (a % 4)
        line = '{"op":"push","account":"a%d","device":"%s","at":%d,"payload":{"aps":%s%s}}' % (a, dev, at, aps, extra)
    elif r < 0.7:
        line = '{"op":"clear","account":"a%d","device":"%s","at":%d,"path":"root.chat.t%d"}' % (a, dev, at, rng.randrange(7))
    elif r < 0.8:
        line = '{"op":"set","account":"a%d","device":"%s","at":%d,"path":"root.inbox","count":%d}' % (a, dev, at, rng.randrange(1, 9))
    elif r < 0.9:
        line = '{"op":"login","account":"a%d","device":"%s","at":%d}' % (a, dev, at)
    else:
        line = '{"op":"tick","account":"a%d","device":"%s","at":%d}' % (a, dev, at)
    buf.append(line)
    if len(buf) >= 10000:
        out.write("\n".join(buf) + "\n")
        buf = []
if buf:
    out.write("\n".join(buf) + "\n")
