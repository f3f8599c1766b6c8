#!/usr/bin/env python3
"""peer_orjson.py -- Python/orjson baseline for `badgeflow filter`.

Reads NDJSON on stdin; for each non-blank line writes one line
{"seq","path","count","total"}: seq is the 1-based line number (blank lines
counted, as the filter's seq is), path the route (root.chat.<thread-id>,
root.promotion.<campaign>, or null; push envelopes are routed by their
payload), count the running number of events routed to that path and total
the running number of routed events. A bad line yields
{"seq":n,"error":{"code":"invalid-json","message":...}} and the stream goes on.
"""
import sys

import orjson


def route(obj):
    if not isinstance(obj, dict):
        return None
    if obj.get("op") == "push" and isinstance(obj.get("payload"), dict):
        obj = obj["payload"]
    aps = obj.get("aps")
    if isinstance(aps, dict):
        tid = aps.get("thread-id")
        if isinstance(tid, (str, int)) and not isinstance(tid, bool):
            return "root.chat.%s" % tid
    promo = obj.get("promo")
    if isinstance(promo, dict):
        camp = promo.get("campaign")
        if isinstance(camp, (str, int)) and not isinstance(camp, bool):
            return "root.promotion.%s" % camp
    return None


def main():
    counts = {}
    total = 0
    out = sys.stdout.buffer
    write = out.write
    loads, dumps = orjson.loads, orjson.dumps
    for seq, line in enumerate(sys.stdin.buffer, 1):
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except orjson.JSONDecodeError as e:
            write(dumps({"seq": seq, "error": {"code": "invalid-json", "message": str(e)}}) + b"\n")
            continue
        path = route(obj)
        count = 0
        if path is not None:
            count = counts.get(path, 0) + 1
            counts[path] = count
            total += 1
        write(dumps({"seq": seq, "path": path, "count": count, "total": total}) + b"\n")
    out.flush()


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(0)
