#!/usr/bin/env python3
"""A deterministic multi-account event stream for `make spark-test`.

Accounts shared by several devices, devices without an account, the default device "" (bare
payload lines), pushes of several kinds, set, clear, login, logout, foreground, background,
appear, disappear, tick and snapshot; bad JSON and other rejected lines, blank and
whitespace-only lines, CRLF endings, and events with and without `at` (RFC 3339 text or UNIX
seconds). Each device stays in one account (or none) for the whole stream.

    gen_stream.py [--lines N] [--seed S] [--all-at] [--expire-every K] > stream.ndjson

--all-at gives every event an `at` and leaves out bare payload lines (which cannot carry
one): a stream whose partitioned run is exact even while the event clock is one clock for
the whole run rather than one per account.

--expire-every K gives most `set` events a `ttl` (a mark that expires) and writes a fleet-wide
`{"op":"expire","at":T}` line about every K lines (now and then one with a bad `at`, or `at`
as RFC 3339 text), each partition of a Spark run answering it for its own accounts.
"""
import argparse
import json
import random
import sys
import time


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--accounts", type=int, default=400)
    ap.add_argument("--devices", type=int, default=1500)
    ap.add_argument("--all-at", action="store_true", help="every event has `at`; no bare payload lines")
    ap.add_argument("--expire-every", type=int, default=0,
                    help="ttl on set events and a fleet-wide expire line about every K lines (0: none)")
    args = ap.parse_args(argv)

    rnd = random.Random(args.seed)
    # About 70% of devices belong to an account; accounts get 1-6 devices.
    owner = {}
    for d in range(args.devices):
        if rnd.random() < 0.7:
            owner[d] = "acct-%d" % rnd.randrange(args.accounts)
    threads = ["alice", "bob", "小王", "team-ü", "ops"] + ["t%d" % i for i in range(40)]
    out = sys.stdout
    write = out.write
    t = 1_700_000_000.0

    def envelope(d, fields, with_at):
        obj = {}
        if d is not None:
            obj["device"] = "dev-%d" % d
            if d in owner:
                obj["account"] = owner[d]
        obj.update(fields)
        if with_at:
            if rnd.random() < 0.2:
                # RFC 3339, whole seconds, UTC.
                obj["at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(t)))
            else:
                obj["at"] = round(t, 3)
        return json.dumps(obj, ensure_ascii=rnd.random() < 0.5, separators=(",", ":"))

    def payload():
        r = rnd.random()
        if r < 0.55:
            return {"aps": {"alert": {"title": "New message", "body": "hi %d" % rnd.randrange(10**6)},
                            "thread-id": rnd.choice(threads), "sound": "default"}}
        if r < 0.7:
            return {"aps": {"alert": "Sale!"}, "promo": {"campaign": "c%d" % rnd.randrange(8)}}
        if r < 0.8:
            return {"aps": {"alert": "News", "category": "news"}}
        if r < 0.9:
            return {"aps": {"content-available": 1}, "type": "read", "thread": rnd.choice(threads)}
        return {"aps": {"content-available": 1}, "type": "unread", "unread": rnd.randrange(30)}

    for _ in range(args.lines):
        t += rnd.random() * 3
        if args.expire_every and rnd.random() < 1 / args.expire_every:
            e = rnd.random()
            if e < 0.05:
                write('{"op":"expire","at":"soon"}\n')
            elif e < 0.2:
                write('{"at":"%s","op":"expire"}\n' % time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(t))))
            else:
                write('{"op":"expire","at":%s}\n' % round(t, 3))
            continue
        r = rnd.random()
        if r < 0.02:
            write("\n")
            continue
        if r < 0.025:
            write(rnd.choice(["   \n", "\t\r\n", "\r\n"]))
            continue
        if r < 0.04:
            write(rnd.choice(['{"op":"push",', "not json", "[1,2,3]", '{"op":"fly","device":"dev-1"}',
                              '{"aps":{"badge":"99+"}}', '{"op":"set","device":"dev-2","path":"root..x","count":1,"at":1}']) + "\n")
            continue
        with_at = args.all_at or rnd.random() < 0.6
        if r < 0.08 and not args.all_at:
            # A bare payload: a push to the default device "", which has no account and no `at`.
            write(json.dumps(payload(), ensure_ascii=False, separators=(",", ":")) + "\n")
            continue
        d = None if r < 0.10 else rnd.randrange(args.devices)
        if d is None and not with_at:
            with_at = True
        op = rnd.random()
        if op < 0.45:
            fields = {"op": "push", "payload": payload()}
            if rnd.random() < 0.03:
                fields["push-type"] = "voip"
                fields["payload"] = {"aps": {}, "call": "x"}
        elif op < 0.55:
            fields = {"op": "clear", "path": "root.chat." + rnd.choice(threads)}
            if rnd.random() < 0.1:
                fields = {"op": "clear", "path": "root.chat", "force": True}
        elif op < 0.62:
            fields = {"op": "set", "path": "root.inbox", "count": rnd.randrange(20)}
            if args.expire_every and rnd.random() < 0.8:
                fields["ttl"] = rnd.randrange(1, 900)
        elif op < 0.70:
            fields = {"op": rnd.choice(["login", "login", "logout"])}
        elif op < 0.78:
            fields = {"op": rnd.choice(["foreground", "background"])}
        elif op < 0.90:
            fields = {"op": rnd.choice(["appear", "disappear"]), "page": rnd.choice(["home", "mine", "settings"])}
        elif op < 0.97:
            fields = {"op": "tick"}
        else:
            fields = {"op": "snapshot"}
        line = envelope(d, fields, with_at)
        write(line + ("\r\n" if rnd.random() < 0.02 else "\n"))


if __name__ == "__main__":
    main()
