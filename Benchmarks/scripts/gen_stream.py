#!/usr/bin/env python3
"""gen_stream.py N [--seed S] -- deterministic NDJSON event stream for `badgeflow filter`.

Writes N lines (~300 bytes on average) to stdout: a messaging-app mix routed by
Fixtures/rules/default.json. Same N and seed give byte-identical output (one
random.Random(seed), no wall clock, no set iteration).

Mix (share of lines): chat pushes 61%, promotions 10%, silent pushes 8% (some
"type":"unread"), localized alerts 8%, read receipts 6%, clear envelopes 4%,
tick/appear/disappear envelopes ~2%, plus login/appear lines at the start.
About 3% of the lines are push envelopes for devices "d1"/"d2". About 10% of
lines are written with ensure_ascii=True so \\uXXXX escapes (and surrogate
pairs) occur. Bodies mix ASCII, Chinese, emoji, accents, quotes, backslashes
and newlines.
"""
import argparse
import json
import random
import sys

THREADS = 5000
DEVICES = ["d1", "d2"]
START_AT = 1_700_000_000

NAMES = ["Alice", "Bob", "Chloé", "Dmitri", "Zoë", "José", "李雷", "韩梅梅",
         "Ana 🌸", "O'Brien", "Søren", "Ğökhan", "Renée", "王小明", "Nguyễn", "Émile"]
PHRASES = [
    "Are we still on for lunch tomorrow?", "ok", "Running 10 min late, sorry!",
    "今天晚上一起吃饭吗？", "收到，谢谢 🙏", "Photo", "Voice message (0:42)",
    "Ça marche, à demain 😀", "He said \"no way\" and left", "path is C:\\Users\\me\\notes",
    "line one\nline two", "🎉🎉🎉", "Café at 5? ☕", "Bitte ruf mich zurück",
    "¿Dónde estás?", "Let me check and get back to you", "👍", "明天见！",
    "The build is green again ✅", "Can you send me the slides from today's meeting?",
    "tab\tseparated\tvalues", "naïve résumé façade", "Happy birthday!!! 🎂🥳",
]
CAMPAIGNS = ["spring-sale", "black-friday", "new-feature", "winback-30d", "referral"]
CATEGORIES = ["news"] * 5 + ["social", "calendar", "orders"]
LOC_KEYS = ["NEWS_HEADLINE", "FRIEND_JOINED", "EVENT_REMINDER", "ORDER_SHIPPED"]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.at = START_AT
        self.msg = 0

    # -- building blocks -------------------------------------------------
    def thread(self):
        # Skewed: a few threads are busy, most are quiet.
        return "t%d" % int(THREADS * self.r.random() ** 2)

    def text(self, lo, hi):
        r, out = self.r, []
        n = r.randint(lo, hi)
        while sum(len(p) for p in out) < n:
            out.append(r.choice(PHRASES))
        return " ".join(out)

    def tick_at(self):
        self.at += self.r.randint(1, 5)
        return self.at

    # -- payloads --------------------------------------------------------
    def chat(self):
        r = self.r
        self.msg += 1
        name = r.choice(NAMES)
        return {"aps": {"alert": {"title": name, "body": self.text(50, 220)},
                        "badge": r.randint(1, 150), "sound": "default",
                        "thread-id": self.thread(), "mutable-content": 1},
                "type": "chat", "sender": "u%d" % r.randint(1, 99999),
                "msg-id": "m%08d" % self.msg}

    def promo(self):
        r = self.r
        return {"aps": {"alert": {"title": "Special offer 🎁", "body": self.text(40, 160)},
                        "sound": "default", "interruption-level": "passive"},
                "promo": {"campaign": r.choice(CAMPAIGNS), "id": r.randint(1, 10**6),
                          "url": "https://example.com/p/%d?utm_source=push" % r.randint(1, 999)},
                "type": "promo"}

    def silent(self):
        r = self.r
        if r.random() < 0.4:
            return {"aps": {"content-available": 1}, "type": "unread",
                    "unread": r.randint(0, 300)}
        return {"aps": {"content-available": 1}, "type": "sync",
                "cursor": "%016x" % r.getrandbits(64),
                "hint": {"mailbox": r.choice(["inbox", "archive", "sent"]),
                         "changes": r.randint(1, 40)}}

    def localized(self):
        r = self.r
        return {"aps": {"alert": {"title-loc-key": r.choice(LOC_KEYS) + "_TITLE",
                                  "loc-key": r.choice(LOC_KEYS),
                                  "loc-args": [r.choice(NAMES), self.text(10, 80)]},
                        "category": r.choice(CATEGORIES), "sound": "default"},
                "article": r.randint(1, 10**7)}

    def read(self):
        return {"aps": {"content-available": 1}, "type": "read", "thread": self.thread()}

    # -- lines -----------------------------------------------------------
    def line(self):
        r = self.r
        x = r.random() * 100
        if x < 61:
            obj = self.chat()
        elif x < 71:
            obj = self.promo()
        elif x < 79:
            obj = self.silent()
        elif x < 87:
            obj = self.localized()
        elif x < 93:
            obj = self.read()
        elif x < 97:
            obj = {"op": "clear", "path": "root.chat." + self.thread()}
            if r.random() < 0.3:
                obj["at"] = self.tick_at()
            return obj
        elif x < 99:
            obj = r.choice([{"op": "tick"}, {"op": "tick"}, {"op": "appear", "page": "home"},
                            {"op": "disappear", "page": "home"}, {"op": "appear", "page": "mine"}])
            obj["at"] = self.tick_at()
            return obj
        else:
            obj = self.chat()
        # ~3% of all lines (3.1% of pushes) go to another device through an envelope.
        if r.random() < 0.031:
            return {"op": "push", "device": r.choice(DEVICES), "at": self.tick_at(),
                    "payload": obj}
        return obj

    def preamble(self):
        out = []
        for dev in [""] + DEVICES:
            env = {"op": "login", "at": self.tick_at()}
            if dev:
                env["device"] = dev
            out.append(env)
            out.append(dict(env, op="appear", page="home", at=self.tick_at()))
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    g = Gen(args.seed)
    objs = g.preamble()[: args.n]
    out = sys.stdout.buffer
    buf = []
    for i in range(args.n):
        obj = objs[i] if i < len(objs) else g.line()
        ascii_only = g.r.random() < 0.10
        buf.append(json.dumps(obj, separators=(",", ":"), ensure_ascii=ascii_only))
        if len(buf) >= 4096:
            out.write(("\n".join(buf) + "\n").encode("utf-8"))
            buf.clear()
    if buf:
        out.write(("\n".join(buf) + "\n").encode("utf-8"))


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # e.g. `| head`: stop quietly
        sys.stderr.close()
        sys.exit(0)
