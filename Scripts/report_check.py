#!/usr/bin/env python3
"""Checks a `badgeflow report` page as Chromium built it (its --dump-dom) against what
`badgeflow filter` wrote for the same input and the state it saved.

usage: report_check.py DOM RESULTS STATE_JSON STATE_INFO [FILTERED_ACCOUNT]

- every data-metric figure equals the one counted from the filter's result lines (and
  `state info` for accounts and devices);
- every data-account section names an account some result or the state holds (a fleet-wide
  expire's entries count for the accounts they list, never for an account ""); its icon is
  the icon of the account's last result (an expire entry's included), and each
  device's number is its delivered number in the saved state (tree policy: "delivered",
  payload policy: "icon");
- with FILTERED_ACCOUNT (the page was opened at #filter=ID): the filter box script ran, so
  only sections whose id contains it are visible.
Exits 1 naming each difference.
"""
import json
import sys
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.metrics = {}
        self.sections = {}  # id -> {"hidden": bool, "icon": str, "devices": {}}
        self.current = None
        self.depth = 0
        self.capture = None
        self.text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.current is not None and tag == "section":
            self.depth += 1
        if tag == "section" and "data-account" in a:
            self.current = a["data-account"]
            self.depth = 0
            self.sections[self.current] = {"hidden": "hidden" in a, "icon": None, "devices": {}}
        if "data-metric" in a:
            self.capture = ("metric", a["data-metric"])
        elif a.get("data-final") == "icon" and self.current is not None:
            self.capture = ("icon", None)
        elif a.get("data-final") == "delivered" and self.current is not None:
            self.capture = ("device", a.get("data-device", ""))
        self.text = ""

    def handle_data(self, data):
        if self.capture:
            self.text += data

    def handle_endtag(self, tag):
        if self.capture:
            kind, key = self.capture
            value = self.text.strip()
            if kind == "metric":
                self.metrics[key] = value
            elif kind == "icon":
                self.sections[self.current]["icon"] = value
            else:
                self.sections[self.current]["devices"][key] = value
            self.capture = None
        if tag == "section" and self.current is not None:
            if self.depth == 0:
                self.current = None
            else:
                self.depth -= 1


def main():
    dom, results, state, info = sys.argv[1:5]
    filtered = sys.argv[5] if len(sys.argv) > 5 else None
    page = Page()
    page.feed(open(dom, encoding="utf-8").read())
    expect = {k: 0 for k in ["results", "errors", "decrements", "decrement-total", "badge-updates", "unmatched"]}
    last_icon = {}
    for line in open(results, encoding="utf-8"):
        r = json.loads(line)
        expect["results"] += 1
        if "error" in r:
            expect["errors"] += 1
            continue
        # A fleet-wide expire names no account: each of its "accounts" entries is that
        # account's result (its decrement, badge updates and icon).
        parts = r["accounts"] if r.get("op") == "expire" else [r]
        for p in parts:
            if "decrement" in p:
                expect["decrements"] += 1
                expect["decrement-total"] += p["decrement"]["by"]
            expect["badge-updates"] += len(p.get("badgeUpdates", []))
            if "icon" in p:
                last_icon[p.get("account", p.get("device", ""))] = p["icon"]
        if r.get("op") == "push" and "rule" in r and r["rule"] is None:
            expect["unmatched"] += 1
    for line in open(info, encoding="utf-8"):
        key, _, value = line.partition(":")
        if key in ("accounts", "devices"):
            expect[key] = int(value.strip())
    saved = json.load(open(state, encoding="utf-8"))
    payload_policy = saved.get("rules", {}).get("icon") == "payload"
    problems = []
    for key, want in expect.items():
        got = page.metrics.get(key)
        if got is None:
            problems.append(f'no data-metric="{key}" on the page')
        elif not got.isdigit() or int(got) != want:
            problems.append(f'data-metric="{key}": page {got!r}, filter {want}')
    if not page.sections:
        problems.append("no data-account section on the page")
    for account, s in page.sections.items():
        if account not in last_icon and account not in saved["accounts"]:
            problems.append(f'data-account="{account}": no result and no state names this account')
        want = last_icon.get(account)
        if want is not None and s["icon"] != str(want):
            problems.append(f'data-account="{account}": icon {s["icon"]!r}, last result {want}')
        devices = saved["accounts"].get(account, {}).get("devices", {})
        for device, d in devices.items():
            n = d.get("icon" if payload_policy else "delivered", 0)
            if s["devices"].get(device) != str(n):
                problems.append(f'data-account="{account}" device {device!r}: page {s["devices"].get(device)!r}, state {n}')
        for device in s["devices"]:
            if device not in devices:
                problems.append(f'data-account="{account}" device {device!r} on the page, not in the state')
        if filtered is not None:
            visible = not s["hidden"]
            if visible != (filtered.lower() in account.lower()):
                problems.append(f'#filter={filtered}: section {account!r} is {"shown" if visible else "hidden"}')
    for p in problems:
        print("report_check: " + p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"report_check: {len(expect)} figures and {len(page.sections)} accounts match the filter ({expect['results']} results)")


main()
