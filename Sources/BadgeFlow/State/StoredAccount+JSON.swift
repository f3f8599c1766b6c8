extension StoredAccount {
    /// The account as one JSON object and a newline, byte for byte what
    /// `badgeflow state get FILE ACCOUNT --json` prints (and `badgeflow serve` answers):
    /// `{"account","total","tree":[{"path","count","show","display"}…],"devices":[{"device","delivered","stale"}…]}`,
    /// then `"settings":{"contribute":{PATH:MODE…}}` when the account has settings of its own.
    public var jsonLine: [UInt8] {
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("account"); w.string(id)
        w.key("total"); w.int(total)
        w.key("tree")
        w.beginArray()
        for s in nodes {
            w.beginObject()
            w.key("path"); w.string(s.path)
            w.key("count"); w.int(s.count)
            w.key("show"); w.bool(s.show)
            w.key("display"); w.string(s.display.description)
            w.endObject()
        }
        w.endArray()
        w.key("devices")
        w.beginArray()
        for d in devices { d.write(into: &w) }
        w.endArray()
        if !contributions.isEmpty {
            w.key("settings")
            w.beginObject()
            w.key("contribute")
            w.beginObject()
            for c in contributions { w.key(c.path); w.string(c.mode.rawValue) }
            w.endObject()
            w.endObject()
        }
        w.endObject()
        w.newline()
        return w.bytes
    }

    /// The device `id` of the account, nil when it has none.
    public func device(_ id: String) -> DeviceState? { devices.first { $0.id == id } }

    /// One device of the account as a JSON object and a newline (`badgeflow serve`'s
    /// `GET /v1/accounts/{id}/devices/{device}`): `{"account","device","delivered","total","stale"}`,
    /// the number the device was last given beside the one it should show; nil when the
    /// account has no device `id`.
    public func deviceJSONLine(_ id: String) -> [UInt8]? {
        guard let d = device(id) else { return nil }
        var w = JSONWriter(capacity: 128)
        w.beginObject()
        w.key("account"); w.string(self.id)
        w.key("device"); w.string(d.id)
        w.key("delivered"); w.int(d.delivered)
        w.key("total"); w.int(total)
        w.key("stale"); w.bool(d.stale)
        w.endObject()
        w.newline()
        return w.bytes
    }
}

extension StoredAccount.DeviceState {
    func write(into w: inout JSONWriter) {
        w.beginObject()
        w.key("device"); w.string(id)
        w.key("delivered"); w.int(delivered)
        w.key("stale"); w.bool(stale)
        w.endObject()
    }
}
