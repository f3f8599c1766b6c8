#!/usr/bin/env python3
"""check_day.py INPUT... -- RESULTS... : a sender's view of a day (gen_day.py).

Reads the input lines and their result lines (one result per non-blank line, in order) and
keeps, as a sender acting on the results would, the number each device shows: a push that
sets the icon delivers the result's icon (to every device of the account when it names
none), a device's own op sets its icon to the result's icon (a reconcile with `badge` to that
badge), and every badgeUpdates entry (fleet-wide lines' included) delivers its badge. Then
checks that every device ends on its account's total (the account's last icon), that no
result is an error and that no contribute result carries a decrement. Prints the figures;
exit 1 on any mismatch.
"""
import json
import sys


def main():
    args = sys.argv[1:]
    if "--" not in args:
        sys.exit("usage: check_day.py INPUT... -- RESULTS...")
    k = args.index("--")
    inputs, results = args[:k], args[k + 1:]
    events = [line for f in inputs for line in open(f) if line.strip()]
    outs = [line for f in results for line in open(f) if line.strip()]
    if len(events) != len(outs):
        sys.exit("check_day.py: %d input lines, %d results" % (len(events), len(outs)))
    shown, total = {}, {}
    errors = contribute_decrements = mutes = unmutes = fleet = 0
    for ev_text, res_text in zip(events, outs):
        ev, res = json.loads(ev_text), json.loads(res_text)
        if "error" in res:
            errors += 1
            continue
        if "accounts" in res:
            fleet += 1
            for entry in res["accounts"]:
                total[entry["account"]] = entry["icon"]
                for u in entry.get("badgeUpdates", []):
                    shown.setdefault(entry["account"], {})[u["device"]] = u["badge"]
            continue
        acc, dev, op = ev.get("account"), ev.get("device", ""), ev["op"]
        if res.get("duplicate"):
            continue
        if op == "contribute":
            if "decrement" in res:
                contribute_decrements += 1
            if ev["mode"] in ("none", "dot"):
                mutes += 1
            else:
                unmutes += 1
        total[acc] = res["icon"]
        sets_icon = res.get("kind", "alert") in ("alert", "badge-only", "none")
        devs = shown.setdefault(acc, {})
        if dev:
            devs.setdefault(dev, 0)
            if op == "reconcile" and "badge" in ev:
                devs[dev] = ev["badge"]
            elif op != "push" or sets_icon:
                devs[dev] = res["icon"]
        elif op == "push" and sets_icon:
            for d in devs:
                devs[d] = res["icon"]
        for u in res.get("badgeUpdates", []):
            devs[u["device"]] = u["badge"]
    devices = sum(len(v) for v in shown.values())
    wrong = [(a, d, n, total.get(a)) for a, v in shown.items() for d, n in v.items() if n != total.get(a)]
    print("lines %d, accounts %d, devices %d, mutes %d, unmutes %d, fleet-wide lines %d" %
          (len(events), len(total), devices, mutes, unmutes, fleet))
    print("errors %d, contribute results with a decrement %d, devices not on their total %d" %
          (errors, contribute_decrements, len(wrong)))
    for w in wrong[:10]:
        print("  account %s device %s shows %s, total %s" % w)
    sys.exit(1 if errors or contribute_decrements or wrong else 0)


if __name__ == "__main__":
    main()
