#!/usr/bin/env python3
"""make-gate-suite.py -- writes Fixtures/gate-suite/: payload templates of every apns-push-type.

valid/ holds payloads APNs accepts (none may get an error, nor a warning its validate.json does
not allow); defects/ holds one planted defect a file, the code it must get listed in
defects/defects.tsv. Scripts/gate-suite.py counts caught, missed and false errors. Payload
shapes follow Apple's documentation (see Fixtures/gate-suite/SOURCES.md); the texts are made up.
Run from the repository root; it rewrites the folder (deterministic output).
"""
import json, os, shutil

ROOT = "Fixtures/gate-suite"
CJK = "\u4e2d\u6587\u6d88\u606f"  # 4 characters, 12 bytes raw UTF-8, 24 bytes as \u escapes


def compact(obj, ascii_only=False):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=ascii_only)


def sized(base, target, key="pad", ascii_only=False, unit="x"):
    """`base` with a custom string key grown so its compact text is exactly `target` bytes."""
    obj = dict(base)
    obj[key] = ""
    n = len(compact(obj, ascii_only).encode())
    step = len(compact({"k": unit}, ascii_only).encode()) - len(compact({"k": ""}, ascii_only).encode())
    count, rest = divmod(target - n, step)
    obj[key] = unit * count + "x" * rest
    text = compact(obj, ascii_only)
    assert len(text.encode()) == target, (len(text.encode()), target)
    return text


def write(path, text):
    full = os.path.join(ROOT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode())


def j(obj):
    return compact(obj)


shutil.rmtree(ROOT, ignore_errors=True)
alert = {"aps": {"alert": {"title": "Anna", "body": "Lunch at noon?"}, "badge": 3, "sound": "default"}}
la_update = {"aps": {"timestamp": 1765000000, "event": "update", "content-state": {"score": "2-1"}}}

valid = {
    # alert
    "alert/simple.json": j(alert),
    "alert/string-alert.json": j({"aps": {"alert": "You have mail"}}),
    "alert/badge-only.json": j({"aps": {"badge": 12}}),
    "alert/badge-zero.json": j({"aps": {"badge": 0}}),
    "alert/sound-only.json": j({"aps": {"sound": "chime.caf"}}),
    "alert/critical-sound.json": j({"aps": {"alert": "Door open", "sound": {"critical": 1, "name": "alarm.caf", "volume": 0.8}}}),
    "alert/localized.json": j({"aps": {"alert": {"loc-key": "GAME_PLAY_REQUEST_FORMAT", "loc-args": ["Jenna", "Frank"]}}}),
    "alert/title-localized.json": j({"aps": {"alert": {"title-loc-key": "T", "title-loc-args": ["a"], "body": "b"}}}),
    "alert/mutable.json": j({"aps": {"alert": {"title": "Photo", "body": "from Bo"}, "mutable-content": 1}, "media": "https://x.example/a.jpg"}),
    "alert/thread.json": j({"aps": {"alert": "hi", "thread-id": "chat-42", "category": "MESSAGE", "target-content-id": "c1"}}),
    "alert/interruption.json": j({"aps": {"alert": "Flight boards", "interruption-level": "time-sensitive", "relevance-score": 0.9}}),
    "alert/summary.json": j({"aps": {"alert": {"body": "3 new", "summary-arg": "Anna", "summary-arg-count": 3}}}),
    "alert/action-null.json": j({"aps": {"alert": {"body": "x", "action-loc-key": None}}}),
    "alert/custom-keys.json": j({"aps": {"alert": "x"}, "acme": {"chat": "alice", "n": [1, 2]}}),
    "alert/cjk-raw-4096.json": sized({"aps": {"alert": CJK}}, 4096, unit=CJK),
    "alert/cjk-escaped-4096.json": sized({"aps": {"alert": CJK}}, 4096, ascii_only=True, unit=CJK),
    "alert/ascii-4095.json": sized(alert, 4095),
    "alert/filter-criteria.json": j({"aps": {"alert": "x", "filter-criteria": "work"}}),
    "alert/empty-aps-badge-and-sound.json": j({"aps": {"badge": 1, "sound": "default"}}),
    "alert/safari.json": j({"aps": {"alert": {"title": "Flight A998", "body": "Boarding", "action": "View"}, "url-args": ["boarding", "A998"]}}),
    # background
    "background/silent.json": j({"aps": {"content-available": 1}}),
    "background/silent-data.json": j({"aps": {"content-available": 1}, "sync": {"since": 1765000000}}),
    "background/silent-thread.json": j({"aps": {"content-available": 1, "thread-id": "t"}}),
    "background/silent-big.json": sized({"aps": {"content-available": 1}}, 4096),
    "background/silent-nested.json": j({"aps": {"content-available": 1}, "a": {"b": {"c": [1, {"d": None}]}}}),
    "background/silent-true-data.json": j({"aps": {"content-available": 1}, "flag": True, "ratio": 0.5}),
    # voip
    "voip/call.json": j({"aps": {}, "caller": "Anna", "uuid": "3E1A"}),
    "voip/call-4600.json": sized({"aps": {}, "caller": "Bo"}, 4600),
    "voip/call-5120.json": sized({"aps": {}, "caller": "Bo"}, 5120),
    "voip/call-no-aps-keys.json": j({"aps": {}, "handle": "+15550100"}),
    "voip/call-cjk.json": j({"aps": {}, "caller": CJK}),
    "voip/call-badge.json": j({"aps": {"badge": 1}, "caller": "x"}),
    # liveactivity
    "liveactivity/update.json": j(la_update),
    "liveactivity/update-alert.json": j({"aps": {"timestamp": 1765000000, "event": "update", "content-state": {"s": 1}, "alert": {"title": "Goal", "body": "2-1", "sound": "goal.caf"}}}),
    "liveactivity/start.json": j({"aps": {"timestamp": 1765000000, "event": "start", "content-state": {"s": 0}, "attributes-type": "MatchAttributes", "attributes": {"home": "A"}, "alert": {"title": "Kick-off", "body": "A vs B"}}}),
    "liveactivity/end.json": j({"aps": {"timestamp": 1765000000, "event": "end", "dismissal-date": 1765003600}}),
    "liveactivity/stale.json": j({"aps": {"timestamp": 1765000000, "event": "update", "content-state": {"s": 2}, "stale-date": 1765001800, "relevance-score": 75}}),
    "liveactivity/localized.json": j({"aps": {"timestamp": 1765000000, "event": "update", "content-state": {"s": 3}, "alert": {"title": {"loc-key": "GOAL", "loc-args": ["A"]}, "body": {"loc-key": "SCORE"}}}}),
    "liveactivity/update-4096.json": sized(la_update, 4096),
    "liveactivity/start-token.json": j({"aps": {"timestamp": 1765000000, "event": "start", "content-state": {"s": 0}, "attributes-type": "T", "attributes": {}, "alert": {"title": "t", "body": "b"}, "input-push-token": 1}}),
    # mdm (Apple: the payload is {"mdm": PushMagic})
    "mdm/wake.json": j({"mdm": "B4D0E2A5-7C6F-4F0B-9E1B-5D3A8C2F1E47"}),
    "mdm/wake-2.json": j({"mdm": "0f6b3c2e-9a1d-4e5f-8b7c-1a2b3c4d5e6f"}),
    "mdm/wake-3.json": j({"mdm": "PushMagic-1"}),
    "mdm/wake-pretty.json": json.dumps({"mdm": "PushMagic-2"}, indent=2),
    "mdm/wake-4.json": j({"mdm": "x"}),
    "mdm/wake-5.json": j({"mdm": "PushMagic-5"}),
    # fileprovider (Apple: {"container-identifier": ..., "domain": ...})
    "fileprovider/root.json": j({"container-identifier": "NSFileProviderRootContainerItemIdentifier"}),
    "fileprovider/working-set.json": j({"container-identifier": "NSFileProviderWorkingSetContainerItemIdentifier"}),
    "fileprovider/domain.json": j({"container-identifier": "NSFileProviderRootContainerItemIdentifier", "domain": "com.example.team"}),
    "fileprovider/item.json": j({"container-identifier": "folder-1234"}),
    "fileprovider/with-aps.json": j({"aps": {"content-available": 1}, "container-identifier": "folder-9"}),
    "fileprovider/item-2.json": j({"container-identifier": "folder-5678", "domain": "d"}),
    # location
    "location/query.json": j({"aps": {}}),
    "location/query-data.json": j({"aps": {}, "request": "here"}),
    "location/query-2.json": j({"aps": {}, "n": 2}),
    # complication
    "complication/update.json": j({"aps": {}, "score": "2-1"}),
    "complication/update-2.json": j({"aps": {"content-available": 1}, "temp": 21}),
    "complication/update-3.json": j({"aps": {}, "steps": 9000}),
    # pushtotalk
    "pushtotalk/speaker.json": j({"aps": {}, "activeSpeaker": "Anna"}),
    "pushtotalk/speaker-2.json": j({"aps": {}, "activeSpeaker": "Bo", "channel": "ops"}),
    "pushtotalk/leave.json": j({"aps": {}, "leaveChannel": True}),
    # widgets (Apple: {"aps": {"content-changed": true}})
    "widgets/reload.json": j({"aps": {"content-changed": True}}),
    "widgets/reload-2.json": j({"aps": {"content-changed": True}, "kind": "Scores"}),
    "widgets/reload-3.json": j({"aps": {"content-changed": True}, "n": 3}),
    # a deliberate warning, allowed by alert/legacy/validate.json (nearest sidecar wins)
    "alert/legacy/custom-in-aps.json": j({"aps": {"alert": "x", "acme-id": 7}}),
    "alert/legacy/custom-in-aps-2.json": j({"aps": {"badge": 2, "acme-id": 8}}),
}
for path, text in valid.items():
    write("valid/" + path, text)
# a pretty-printed alert whose layout makes it larger than 4096, compact 4000
pretty = json.loads(sized(alert, 4000))
text = json.dumps(pretty, indent=8)
text = text.replace('"pad": "', '"pad":\n' + " " * 700 + '"')
assert len(text.encode()) > 4096
write("valid/alert/pretty-4000-compact.json", text)

write("valid/validate.json", json.dumps({
    "push-types": {"background/*": "background", "voip/*": "voip", "liveactivity/*": "liveactivity", "mdm/*": "mdm",
                   "fileprovider/*": "fileprovider", "location/*": "location", "complication/*": "complication",
                   "pushtotalk/*": "pushtotalk", "widgets/*": "widgets", "*": "alert"},
}, indent=2) + "\n")
write("valid/alert/legacy/validate.json", json.dumps({
    "allowed-warnings": {"custom-in-aps*.json": ["unknown-aps-key"]},
}, indent=2) + "\n")

# defects: (file, push type, expected severity:code@pointer, text)
big_cjk = sized({"aps": {"alert": CJK}}, 5812, ascii_only=True, unit=CJK)  # Python's json.dumps default
defects = [
    ("too-large-cjk-escaped.json", "alert", "error:payload-too-large@", big_cjk),
    ("too-large-4097.json", "alert", "error:payload-too-large@", sized(alert, 4097)),
    ("too-large-cjk-raw-4097.json", "alert", "error:payload-too-large@", sized({"aps": {"alert": CJK}}, 4097, unit=CJK)),
    ("too-large-voip-5121.json", "voip", "error:payload-too-large@", sized({"aps": {}, "caller": "Bo"}, 5121)),
    ("too-large-la-4097.json", "liveactivity", "error:payload-too-large@", sized(la_update, 4097)),
    ("too-large-pretty.json", "alert", "error:payload-too-large@", json.dumps(json.loads(sized(alert, 4097)), indent=4)),
    ("missing-aps.json", "alert", "error:missing-aps@/aps", j({"alert": "x"})),
    ("mdm-missing-key.json", "mdm", "error:missing-key@/mdm", j({"magic": "x"})),
    ("fileprovider-missing-key.json", "fileprovider", "error:missing-key@/container-identifier", j({"domain": "d"})),
    ("mdm-wrong-type.json", "mdm", "error:wrong-type@/mdm", j({"mdm": 5})),
    ("fileprovider-empty.json", "fileprovider", "error:invalid-value@/container-identifier", j({"container-identifier": ""})),
    ("badge-string.json", "alert", "error:wrong-type@/aps/badge", j({"aps": {"badge": "99+"}})),
    ("badge-float.json", "alert", "error:wrong-type@/aps/badge", j({"aps": {"badge": 3.5}})),
    ("badge-bool.json", "alert", "error:wrong-type@/aps/badge", j({"aps": {"badge": True}})),
    ("badge-negative.json", "alert", "error:out-of-range@/aps/badge", j({"aps": {"badge": -1}})),
    ("badge-huge.json", "alert", "error:out-of-range@/aps/badge", j({"aps": {"badge": 2147483648}})),
    ("volume.json", "alert", "error:out-of-range@/aps/sound/volume", j({"aps": {"sound": {"name": "a", "volume": 1.5}}})),
    ("interruption.json", "alert", "error:invalid-value@/aps/interruption-level", j({"aps": {"alert": "x", "interruption-level": "urgent"}})),
    ("event.json", "liveactivity", "error:invalid-value@/aps/event", j({"aps": {"timestamp": 1, "event": "begin"}})),
    ("too-deep.json", "alert", "error:too-deep@", '{"aps":{"alert":"x"},"d":' + "[" * 40 + "]" * 40 + "}"),
    ("invalid-utf8.json", "alert", "error:invalid-utf8@", b'{"aps":{"alert":"caf\xe9"}}'),
    ("truncated.json", "alert", "error:invalid-json@", '{"aps":{"alert":"x"}'),
    ("nan.json", "alert", "error:invalid-json@/aps/relevance-score", '{"aps":{"alert":"x","relevance-score":NaN}}'),
    ("infinity.json", "alert", "error:invalid-json@/aps/relevance-score", '{"aps":{"alert":"x","relevance-score":-Infinity}}'),
    ("single-quoted.json", "alert", "error:invalid-json@", "{\"aps\":{\"alert\":'x'}}"),
    ("duplicate-aps.json", "alert", "error:duplicate-key@/aps", '{"aps":{"alert":"x"},"aps":{"badge":1}}'),
    ("duplicate-badge.json", "alert", "error:duplicate-key@/aps/badge", '{"aps":{"badge":1,"badge":2}}'),
    ("duplicate-in-alert.json", "alert", "error:duplicate-key@/aps/alert/body", '{"aps":{"alert":{"body":"a","body":"b"}}}'),
    ("stale-date-ms.json", "liveactivity", "error:date-in-milliseconds@/aps/stale-date",
     j({"aps": {"timestamp": 1765000000, "event": "update", "content-state": {}, "stale-date": 1765001800000}})),
    ("dismissal-date-ms.json", "liveactivity", "error:date-in-milliseconds@/aps/dismissal-date",
     j({"aps": {"timestamp": 1765000000, "event": "end", "dismissal-date": 1765003600000}})),
    ("la-update-no-state.json", "liveactivity", "error:missing-key@/aps/content-state", j({"aps": {"timestamp": 1, "event": "update"}})),
    ("la-start-no-attributes.json", "liveactivity", "error:missing-key@/aps/attributes",
     j({"aps": {"timestamp": 1, "event": "start", "content-state": {}, "attributes-type": "T", "alert": "x"}})),
    ("la-no-timestamp.json", "liveactivity", "error:missing-key@/aps/timestamp", j({"aps": {"event": "end"}})),
    ("not-an-object.json", "alert", "error:not-an-object@", j([{"aps": {}}])),
    ("aps-not-object.json", "alert", "error:aps-not-an-object@/aps", j({"aps": "x"})),
    ("alert-number.json", "alert", "error:wrong-type@/aps/alert", j({"aps": {"alert": 5}})),
    ("loc-args-string.json", "alert", "error:wrong-type@/aps/alert/loc-args", j({"aps": {"alert": {"loc-key": "K", "loc-args": "a"}}})),
    ("critical-string.json", "alert", "error:wrong-type@/aps/sound/critical", j({"aps": {"sound": {"critical": "yes"}}})),
    ("relevance-high.json", "alert", "error:out-of-range@/aps/relevance-score", j({"aps": {"alert": "x", "relevance-score": 1.5}})),
    ("input-push-token.json", "liveactivity", "error:out-of-range@/aps/input-push-token",
     j({"aps": {"timestamp": 1, "event": "end", "input-push-token": 2}})),
    ("url-args-string.json", "alert", "error:wrong-type@/aps/url-args", j({"aps": {"alert": "x", "url-args": "a"}})),
    ("voip-alert.json", "voip", "warning:push-type-mismatch@/aps/alert", j({"aps": {"alert": "Call"}, "caller": "x"})),
    ("widgets-alert.json", "widgets", "warning:push-type-mismatch@/aps/alert", j({"aps": {"content-changed": True, "alert": "x"}})),
    ("location-alert.json", "location", "warning:push-type-mismatch@/aps/alert", j({"aps": {"alert": "x"}})),
    ("complication-alert.json", "complication", "warning:push-type-mismatch@/aps/alert", j({"aps": {"alert": "x"}})),
    ("fileprovider-alert.json", "fileprovider", "warning:push-type-mismatch@/aps/alert",
     j({"aps": {"alert": "x"}, "container-identifier": "c"})),
    ("background-badge.json", "background", "warning:push-type-mismatch@/aps", j({"aps": {"content-available": 1, "badge": 1}})),
    ("alert-shows-nothing.json", "alert", "warning:push-type-mismatch@/aps", j({"aps": {"thread-id": "t"}})),
    ("liveactivity-no-event.json", "liveactivity", "warning:push-type-mismatch@/aps/event", j({"aps": {"timestamp": 1}})),
    ("mdm-with-aps.json", "mdm", "warning:push-type-mismatch@/aps", j({"mdm": "m", "aps": {"content-available": 1}})),
    ("loc-args-no-key.json", "alert", "warning:loc-args-without-loc-key@/aps/alert/loc-args", j({"aps": {"alert": {"body": "x", "loc-args": ["a"]}}})),
    ("title-args-no-key.json", "alert", "warning:loc-args-without-loc-key@/aps/alert/title-loc-args",
     j({"aps": {"alert": {"title": "t", "title-loc-args": ["a"]}}})),
    ("empty-title-body.json", "alert", "warning:empty-alert@/aps/alert", j({"aps": {"alert": {"title": "", "body": ""}}})),
    ("empty-alert-string.json", "alert", "warning:empty-alert@/aps/alert", j({"aps": {"alert": ""}})),
    ("content-available-zero.json", "alert", "warning:content-available-zero@/aps/content-available",
     j({"aps": {"alert": "x", "content-available": 0}})),
    ("silent-with-alert.json", "background", "warning:silent-with-alert@/aps/content-available",
     j({"aps": {"content-available": 1, "sound": "a"}})),
    ("timestamp-ms.json", "liveactivity", "warning:timestamp-in-milliseconds@/aps/timestamp",
     j({"aps": {"timestamp": 1765000000000, "event": "end"}})),
    ("unknown-aps-key.json", "alert", "warning:unknown-aps-key@/aps/acme-id", j({"aps": {"alert": "x", "acme-id": 1}})),
]
rows = ["file\tpush-type\texpected"]
types = {}
for name, ptype, expected, text in defects:
    write("defects/" + name, text)
    rows.append(f"{name}\t{ptype}\t{expected}")
    types.setdefault(ptype, []).append(name)
write("defects/defects.tsv", "\n".join(rows) + "\n")
write("defects/validate.json", json.dumps({"push-types": {n: t for t, names in sorted(types.items()) for n in names}}, indent=2) + "\n")
print(f"{len(valid) + 1} valid payloads, {len(defects)} defects in {ROOT}")
