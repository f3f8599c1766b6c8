// Adds one to a path N times, each under the shared file's lock: the other half of
// BadgeTreeTests' two-process test. Usage: SharedFileHelper FILE PATH N
import BadgeTree

let arguments = CommandLine.arguments
guard arguments.count == 4, let n = Int(arguments[3]) else {
    fatalError("usage: SharedFileHelper FILE PATH N")
}
for _ in 0..<n {
    try BadgeCenter.withSharedFile(arguments[1]) { center in try center.increment(arguments[2]) }
}
