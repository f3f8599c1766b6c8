#!/usr/bin/env python3
"""gen_payloads.py N [--seed S] -- deterministic bare APNs payloads, one per line.

Input for `badgeflow validate` throughput. Reuses the payload builders of
gen_stream.py (chat, promo, localized, silent, read) and adds badge-only,
critical-sound and Live Activity payloads, a few warning cases (unknown aps
key, silent-with-alert, empty alert) and ~5% invalid ones: badge "99+",
negative badge, unknown interruption-level, truncated JSON.
Same N and seed give byte-identical output.
"""
import argparse
import json
import sys

from gen_stream import Gen


def valid(g):
    r = g.r
    x = r.random() * 100
    if x < 45:
        return g.chat()
    if x < 55:
        return g.promo()
    if x < 65:
        return g.localized()
    if x < 75:
        return g.silent()
    if x < 80:
        return g.read()
    if x < 86:
        return {"aps": {"badge": r.randint(0, 500)}}
    if x < 89:
        return {"aps": {"alert": {"title": "Server down", "body": g.text(20, 80)},
                        "sound": {"critical": 1, "name": "alarm.caf", "volume": 0.8},
                        "interruption-level": "critical"}, "incident": r.randint(1, 9999)}
    if x < 95:
        return {"aps": {"timestamp": g.tick_at(), "event": r.choice(["update", "update", "end"]),
                        "content-state": {"score": [r.randint(0, 5), r.randint(0, 5)],
                                          "minute": r.randint(1, 90)},
                        "relevance-score": r.randint(0, 100) / 100,
                        "stale-date": g.at + 3600}}
    # Valid but with a warning.
    return r.choice([
        {"aps": {"alert": "hello", "badge": 1, "priority": 10}},          # unknown-aps-key
        {"aps": {"content-available": 1, "badge": 3}, "type": "sync"},     # silent-with-alert
        {"aps": {"alert": {}, "sound": "default"}},                        # empty-alert
    ])


def line(g):
    r = g.r
    x = r.random() * 100
    if x >= 5:
        return json.dumps(valid(g), separators=(",", ":"), ensure_ascii=r.random() < 0.1)
    p = g.chat()
    kind = r.randrange(4)
    if kind == 0:
        p["aps"]["badge"] = "99+"                      # wrong-type
    elif kind == 1:
        p["aps"]["badge"] = -r.randint(1, 9)           # out-of-range
    elif kind == 2:
        p["aps"]["interruption-level"] = "urgent"      # invalid-value
    text = json.dumps(p, separators=(",", ":"), ensure_ascii=False)
    if kind == 3:                                      # invalid-json (truncated)
        text = text[: r.randint(1, len(text) - 1)]
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    g = Gen(args.seed)
    out = sys.stdout.buffer
    buf = []
    for _ in range(args.n):
        buf.append(line(g))
        if len(buf) >= 4096:
            out.write(("\n".join(buf) + "\n").encode("utf-8"))
            buf.clear()
    if buf:
        out.write(("\n".join(buf) + "\n").encode("utf-8"))


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(0)
