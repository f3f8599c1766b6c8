// The other processes of BadgeTreeTests' shared-file tests.
//
//   SharedFileHelper FILE PATH N      adds one to PATH N times, each under the file's lock
//   SharedFileHelper pairs FILE       forever: one change adds one to root.pair.a and to
//                                     root.pair.b and reads a chat; prints "done N" after
//                                     each (the kill test kills it at random moments)
//   SharedFileHelper extension FILE   the Notification Service Extension: each stdin line
//                                     "push PATH" adds one to PATH through the file;
//                                     prints the total after each
//   SharedFileHelper app FILE         the app: a long-lived center that observes, reads,
//                                     mutes and unmutes through the file (commands below)
import BadgeTree

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The configuration every process of the tests uses: a muted-by-default chat, a dot tab.
let settings: BadgeTree.Configuration = {
    var c = BadgeTree.Configuration()
    c.contribute["root.chat.muted"] = Contribution.none
    c.display["root.me"] = .dot
    return c
}()

func say(_ line: String) {
    print(line)
    fflush(nil)
}

func fail(_ message: String) -> Never {
    FileHandleLess.writeError(message + "\n")
    exit(2)
}

enum FileHandleLess {
    static func writeError(_ s: String) {
        var s = s
        s.withUTF8 { b in _ = write(2, b.baseAddress, b.count) }
    }
}

let arguments = CommandLine.arguments
if arguments.count == 4, let n = Int(arguments[3]) {
    for _ in 0..<n {
        try BadgeCenter.withSharedFile(arguments[1]) { center in try center.increment(arguments[2]) }
    }
    exit(0)
}
guard arguments.count == 3 else { fail("usage: SharedFileHelper FILE PATH N | pairs FILE | extension FILE | app FILE") }
let file = arguments[2]

switch arguments[1] {
case "pairs":
    var done = 0
    while true {
        try BadgeCenter.withSharedFile(file, configuration: settings) { center in
            if center.account == nil { center.login(account: "u1", device: "phone") }
            try center.increment("root.pair.a")
            try center.increment("root.pair.b")
            try center.increment("root.chat.c\(done % 50)")
            if done % 3 == 0 { try center.clear("root.chat.c\((done + 25) % 50)") }
            if done % 7 == 0 { center.acknowledgeEvents(center.pendingEvents.prefix(2).map(\.id)) }
        }
        done += 1
        say("done \(done)")
    }

case "extension":
    while let line = readLine() {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2, parts[0] == "push" else { fail("unknown command: \(line)") }
        let total = try BadgeCenter.withSharedFile(file, configuration: settings) { center in
            try center.increment(parts[1])
            return center.total
        }
        say("total \(total)")
    }

case "app":
    // Commands, one a line; each answers one line:
    //   login ACCOUNT DEVICE   -> ok
    //   reload                 -> total N
    //   read PATH              -> total N   (a clear through the file)
    //   mute PATH / unmute PATH / default PATH -> total N
    //   pending                -> events N, then N lines "ID<TAB>DECREMENT<TAB>LINE"
    //   ack ID                 -> ok        (acknowledges through ID, through the file)
    //   state                  -> total N heard M   (M: the root as the observer last heard it)
    let center = try BadgeCenter.openOrCreate(file, configuration: settings)
    let heard = Heard()
    let token = try center.observe("root") { state in heard.set(state.count) }
    defer { token.cancel() }
    while let line = readLine() {
        let parts = line.split(separator: " ").map(String.init)
        guard let command = parts.first else { continue }
        switch command {
        case "login" where parts.count == 3:
            try center.withSharedFile(file) { shared in shared.login(account: parts[1], device: parts[2]) }
            say("ok")
        case "reload":
            try center.reload(from: file)
            say("total \(center.total)")
        case "read" where parts.count == 2:
            try center.withSharedFile(file) { shared in try shared.clear(parts[1]) }
            say("total \(center.total)")
        case "mute" where parts.count == 2, "unmute" where parts.count == 2, "default" where parts.count == 2:
            let mode: Contribution =
                command == "mute" ? .none : command == "unmute" ? .count : (settings.contribute[parts[1]] ?? .count)
            try center.withSharedFile(file) { shared in try shared.setContribution(mode, of: parts[1]) }
            say("total \(center.total)")
        case "pending":
            let events = center.pendingEvents
            say("events \(events.count)")
            for e in events { say("\(e.id)\t\(e.decrement?.by ?? -1)\t\(e.line)") }
        case "ack" where parts.count == 2:
            try center.withSharedFile(file) { shared in shared.acknowledgeEvents(through: parts[1]) }
            say("ok")
        case "state":
            say("total \(center.total) heard \(heard.get())")
        default:
            fail("unknown command: \(line)")
        }
    }

default:
    fail("unknown mode \(arguments[1])")
}

/// What the app's observer last heard of the root.
final class Heard: @unchecked Sendable {
    // Guarded by `lock`.
    private var value = 0
    private var lock = pthread_mutex_t()
    init() { pthread_mutex_init(&lock, nil) }
    func set(_ v: Int) {
        pthread_mutex_lock(&lock)
        value = v
        pthread_mutex_unlock(&lock)
    }
    func get() -> Int {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return value
    }
}
