#!/usr/bin/env python3
"""A version 2 JSON state of ACCOUNTS accounts, each with 3 marks (a chat, mail, a promotion
dot) and 1-3 devices, as a fleet's state looks after a while.

Usage: gen_fleet_state.py ACCOUNTS > fleet-state.json
"""
import sys

accounts = int(sys.argv[1])
out = sys.stdout
out.write('{"format": "badgeflow-state", "version": 2, "accounts": {')
sync = '{"loggedIn": true, "foreground": true, "visible": [], "appeared": [], "disappearedAt": {}, "intervalStart": 1732269600}'
buf = []
for a in range(accounts):
    devices = ", ".join('"d%d": {"icon": 0, "delivered": %d, "sync": %s}' % (d, 1 + a % 5 + 2, sync)
                        for d in range(1 + a % 3))
    marks = '"root.chat.t%d": %d, "root.mail": 2, "root.promotion.c%d": "dot"' % (a % 7, 1 + a % 5, a % 4)
    buf.append('%s"a%d": {"clock": 1732269600, "marks": {%s}, "devices": {%s}}' % ("," if a else "", a, marks, devices))
    if len(buf) >= 10000:
        out.write("".join(buf))
        buf = []
out.write("".join(buf) + "}}\n")
