#!/usr/bin/env python3
"""Checks a `badgeflow report` page as Chromium built it (its --dump-dom) against what
`badgeflow filter` wrote for the same input and the state it saved.

usage: report_check.py DOM RESULTS STATE_JSON STATE_INFO INPUT [--filter TEXT] [--search TEXT ACCOUNT]

- every data-metric figure equals the one counted from the filter's result lines (and
  `state info` for accounts and devices);
- every data-account section names an account some result, rejected line or the state holds (a fleet-wide
  expire's entries count for the accounts they list, never for an account ""); its icon is
  the icon of the account's last result (an expire entry's included), and each
  device's number is its delivered number in the saved state (tree policy: "delivered",
  payload policy: "icon");
- with --filter TEXT (the page was opened at #filter=TEXT): the filter box script ran, so
  only sections whose id contains it are visible;
- the search index (issue 46): when complete, it lists every account of the input (those
  only rejected lines name included) with its icon (its last result's), its devices and
  their numbers as the saved state holds them, its duplicates (results with
  "duplicate":true) and its errors (rejected lines whose `account`, else `device`, names
  it); each device a logout removed while showing a number (its result sends it 0) is
  listed as left;
- the groups support asks about: each data-count is the number of index entries with that
  flag (duplicates and errors counted from the filter's results), at most 20 are shown and
  each shown one has its section, in that group;
- every table has a caption, every section's anchor is `account-` and its id
  percent-encoded, every results table has a time and an id column, and the first screen's
  first and last event times are the input's;
- with --search TEXT ACCOUNT (the page was opened at #filter=TEXT): the script searched the
  index and lists ACCOUNT with its icon and devices, and, when ACCOUNT has no section, the
  command that reports it (`--account ACCOUNT`).
Exits 1 naming each difference.
"""
import calendar
import re
import time
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
        self.tables = 0
        self.captions = 0
        self.in_table = []
        self.index = None
        self.index_attrs = {}
        self.in_index = False
        self.groups = {}
        self.group = None
        self.anchors = {}
        self.rows_headers = []
        self.results = {}
        self.result = None
        self.result_cell = None
        self.times = {}
        self.ready = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html" and "data-ready-ms" in a:
            self.ready = int(a["data-ready-ms"])
        if tag == "table":
            self.tables += 1
            self.in_table.append(a.get("class", ""))
        if tag == "caption":
            self.captions += 1
        if tag == "th" and self.in_table and self.in_table[-1] == "rows":
            self.capture = ("rows-header", None)
            self.text = ""
            return
        if tag == "script" and a.get("id") == "account-index":
            self.in_index = True
            self.index_attrs = a
            self.index = ""
        if tag == "li" and "data-group" in a:
            self.group = a["data-group"]
            self.groups[self.group] = {"count": int(a["data-count"]), "members": []}
        if tag == "a" and "data-member" in a and self.group:
            self.groups[self.group]["members"].append(a["data-member"])
        if tag == "time" and "data-time" in a:
            self.capture = ("time", a["data-time"])
            self.text = ""
            return
        if tag == "tr" and "data-result" in a:
            self.result = a["data-result"]
            self.results[self.result] = {"command": None}
        if self.result is not None:
            if "data-icon" in a:
                self.results[self.result]["icon"] = None
                self.result_cell = "icon"
            if "data-devices" in a:
                self.results[self.result]["devices"] = a["data-devices"]
            if "data-flags" in a:
                self.results[self.result]["flags"] = a["data-flags"]
            if "data-command" in a:
                self.result_cell = "command"
            if self.result_cell:
                self.capture = ("result", self.result_cell)
                self.text = ""
                return
        if tag == "section" and "data-account" in a:
            self.anchors[a["data-account"]] = a.get("id")
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
        if self.in_index:
            self.index += data
        if self.capture:
            self.text += data

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_index = False
        if tag == "table" and self.in_table:
            self.in_table.pop()
        if tag == "li":
            self.group = None
        if tag == "tr":
            self.result = None
        if self.capture:
            kind, key = self.capture
            value = self.text.strip()
            if kind == "rows-header":
                self.rows_headers.append(value)
                self.capture = None
                return
            if kind == "time":
                self.times[key] = value
                self.capture = None
                return
            if kind == "result":
                self.results[self.result][key] = value
                self.result_cell = None
                self.capture = None
                return
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


def pick(dom):
    """Prints `TEXT<TAB>ACCOUNT`: an account of the index not shown in detail, and what to
    search it by (a device id only it has, else its id); nothing when every account is shown."""
    page = Page()
    page.feed(open(dom, encoding="utf-8").read())
    owners = {}
    entries = []
    for line in (page.index or "").split("\n"):
        if not line:
            continue
        f = line.split("\t")
        devices = [unesc(d.rpartition("=")[0]) for d in f[6].split(" ")] if f[6] else []
        entries.append((unesc(f[0]), devices))
        for d in devices:
            owners.setdefault(d.lower(), set()).add(unesc(f[0]))
    for account, devices in entries:
        if account in page.sections or not account:
            continue
        for d in devices:
            if d and len(owners[d.lower()]) == 1 and not any(d.lower() in a.lower() for a, _ in entries if a != account):
                print(f"{d}\t{account}")
                return
        print(f"{account}\t{account}")
        return


def main():
    if sys.argv[1] == "--pick":
        pick(sys.argv[2])
        return
    dom, results, state, info, source = sys.argv[1:6]
    rest = sys.argv[6:]
    filtered = search = None
    while rest:
        if rest[0] == "--filter":
            filtered, rest = rest[1], rest[2:]
        elif rest[0] == "--search":
            search, rest = (rest[1], rest[2]), rest[3:]
        else:
            sys.exit(f"report_check: unknown argument {rest[0]!r}")
    page = Page()
    page.feed(open(dom, encoding="utf-8").read())
    expect = {k: 0 for k in ["results", "errors", "decrements", "decrement-total", "badge-updates", "unmatched"]}
    last_icon = {}
    inputs = open(source, encoding="utf-8").read().split("\n")
    duplicates, errors, left, accounts = {}, {}, {}, set()
    times = []
    for line in open(results, encoding="utf-8"):
        r = json.loads(line)
        expect["results"] += 1
        if "error" in r:
            expect["errors"] += 1
            owner = error_owner(inputs[r["seq"] - 1])
            if owner is not None:
                errors[owner] = errors.get(owner, 0) + 1
                accounts.add(owner)
            continue
        t = event_time(inputs[r["seq"] - 1])
        if t is not None:
            times.append(t)
        if r.get("op") != "expire":
            key = r.get("account", r.get("device", ""))
            accounts.add(key)
            if r.get("duplicate"):
                duplicates[key] = duplicates.get(key, 0) + 1
            if r.get("op") == "logout" and any(u["device"] == r["device"] for u in r.get("badgeUpdates", [])):
                left.setdefault(key, set()).add(r["device"])
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
        if account not in last_icon and account not in saved["accounts"] and account not in errors:
            problems.append(f'data-account="{account}": no result, no rejected line and no state names this account')
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
    # The search index.
    index = {}
    for line in (page.index or "").split("\n"):
        if not line:
            continue
        f = line.split("\t")
        devs = {}
        for d in f[6].split(" ") if f[6] else []:
            k, _, n = d.rpartition("=")
            devs[unesc(k)] = n
        gone = {unesc(d.rpartition("=")[0]) for d in f[7].split(" ")} if len(f) > 7 and f[7] else set()
        index[unesc(f[0])] = {"icon": f[1], "flags": f[2], "dups": int(f[4]), "errors": int(f[5]), "devices": devs, "left": gone}
    complete = page.index_attrs.get("data-complete") == "true"
    if page.index is None:
        problems.append("no account index on the page")
    all_accounts = accounts | set(saved["accounts"])
    if complete and set(index) != all_accounts:
        missing = sorted(all_accounts - set(index))[:5]
        extra = sorted(set(index) - all_accounts)[:5]
        problems.append(f"index: {len(index)} accounts, the input has {len(all_accounts)} (missing {missing}, extra {extra})")
    if int(page.index_attrs.get("data-accounts", "-1")) != len(all_accounts):
        problems.append(f"index data-accounts {page.index_attrs.get('data-accounts')}, the input has {len(all_accounts)}")
    for account, e in index.items():
        want = last_icon.get(account)
        if want is not None and e["icon"] != str(want):
            problems.append(f"index {account!r}: icon {e['icon']}, last result {want}")
        devices = saved["accounts"].get(account, {}).get("devices", {})
        want_devs = {d: str(v.get("icon" if payload_policy else "delivered", 0)) for d, v in devices.items()}
        if e["devices"] != want_devs:
            problems.append(f"index {account!r}: devices {e['devices']}, state {want_devs}")
        if e["dups"] != duplicates.get(account, 0):
            problems.append(f"index {account!r}: {e['dups']} duplicates, the filter {duplicates.get(account, 0)}")
        if e["errors"] != errors.get(account, 0):
            problems.append(f"index {account!r}: {e['errors']} errors, the filter {errors.get(account, 0)}")
        if not left.get(account, set()) <= e["left"] | set(devices):
            problems.append(f"index {account!r}: left {sorted(e['left'])}, logouts showing a number {sorted(left[account])}")
        for flag, on in (("d", e["dups"] > 0), ("e", e["errors"] > 0), ("l", bool(e["left"])),
                         ("m", any(n != e["icon"] for n in e["devices"].values()))):
            if (flag in e["flags"]) != on:
                problems.append(f"index {account!r}: flags {e['flags']!r}, flag {flag} should be {'on' if on else 'off'}")
    if complete:
        for account, n in list(duplicates.items()) + list(errors.items()):
            if account not in index:
                problems.append(f"index: no entry for {account!r}")
    # The groups support asks about.
    flags = {"mismatch": "m", "left": "l", "duplicates": "d", "errors": "e"}
    for group, flag in flags.items():
        g = page.groups.get(group)
        if g is None:
            problems.append(f"no group {group!r} on the page")
            continue
        if complete:
            want = sum(1 for e in index.values() if flag in e["flags"])
            if g["count"] != want:
                problems.append(f"group {group}: data-count {g['count']}, the index flags {want}")
        if group == "duplicates" and g["count"] != len(duplicates):
            problems.append(f"group duplicates: {g['count']}, the filter's results {len(duplicates)}")
        if group == "errors" and g["count"] != len(errors):
            problems.append(f"group errors: {g['count']}, the filter's results {len(errors)}")
        if len(g["members"]) != min(20, g["count"]):
            problems.append(f"group {group}: {len(g['members'])} shown of {g['count']}")
        for m in g["members"]:
            if m not in page.sections:
                problems.append(f"group {group}: {m!r} shown without its section")
            elif m in index and flag not in index[m]["flags"]:
                problems.append(f"group {group}: {m!r} is not flagged {flag}")
    # Reading it: captions, anchors, the time and id columns, the time range.
    if page.captions < page.tables:
        problems.append(f"{page.tables} tables, {page.captions} captions")
    for account, anchor in page.anchors.items():
        want = "account-" + "".join(
            chr(b) if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "-._~") else "%%%02X" % b
            for b in account.encode("utf-8"))
        if anchor != want:
            problems.append(f"section {account!r}: anchor {anchor!r}, want {want!r}")
    if page.sections and not {"time", "id"} <= set(page.rows_headers):
        problems.append(f"results table headers {sorted(set(page.rows_headers))}: no time or id column")
    if times:
        for key, t in (("first", min(times)), ("last", max(times))):
            want = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(int(t)))
            if page.times.get(key) != want:
                problems.append(f"{key} event time {page.times.get(key)!r}, the input's {want!r}")
    # A searched account.
    if search is not None:
        text, account = search
        r = page.results.get(account)
        if r is None:
            problems.append(f"#filter={text}: the search lists no {account!r} (it lists {sorted(page.results)[:5]})")
        else:
            e = index.get(account, {})
            if r.get("icon") != e.get("icon") or r.get("icon") != str(last_icon.get(account)):
                problems.append(f"search {account!r}: icon {r.get('icon')}, index {e.get('icon')}, filter {last_icon.get(account)}")
            if r.get("flags") != e.get("flags"):
                problems.append(f"search {account!r}: flags {r.get('flags')!r}, index {e.get('flags')!r}")
            if account not in page.sections:
                cmd = r.get("command") or ""
                if f"--account {account} " not in cmd and f"--account '{account}' " not in cmd:
                    problems.append(f"search {account!r}: not shown, and no command names it ({cmd!r})")
    for p in problems:
        print("report_check: " + p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(
        f"report_check: {len(expect)} figures and {len(page.sections)} accounts match the filter ({expect['results']} results);"
        f" index {len(index)} accounts ({'complete' if complete else 'flagged only'}), groups "
        + ", ".join(f"{k} {v['count']}" for k, v in page.groups.items())
        + (f"; searched {search[0]!r}: {search[1]!r} found" if search else "")
        + (f"; script ready in {page.ready} ms" if page.ready is not None else ""))


def unesc(s):
    return re.sub(r"\\(u[0-9a-fA-F]{4}|\\)", lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1)[1:], 16)), s)


def parsed(line):
    try:
        v = json.loads(line)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


def error_owner(line):
    """The account a rejected line names: its `account`, else `device`, else "" (none)."""
    v = parsed(line)
    if v is None:
        return None
    if isinstance(v.get("account"), str):
        return v["account"]
    if isinstance(v.get("device"), str):
        return v["device"]
    if v.get("op") == "expire" and "aps" not in v:
        return None
    return "" if "account" not in v and "device" not in v else None


def event_time(line):
    v = parsed(line)
    # A line with a top-level `aps` is a payload: its `at` is a custom key, not the event's time.
    t = v.get("at") if v and "aps" not in v else None
    if isinstance(t, (int, float)) and not isinstance(t, bool):
        return t
    if isinstance(t, str):
        m = re.match(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.\d+)?([Zz]|[+-]\d\d:\d\d)$", t)
        if m:
            y, mo, d, h, mi, se = (int(x) for x in m.groups()[:6])
            off = 0 if m.group(7) in "Zz" else (1 if m.group(7)[0] == "+" else -1) * (int(m.group(7)[1:3]) * 3600 + int(m.group(7)[4:6]) * 60)
            return calendar.timegm((y, mo, d, h, mi, se)) - off
    return None


main()
