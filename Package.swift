// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "BadgeFlow",
    // BadgeTree uses nothing newer than Swift concurrency's AsyncStream and pthreads.
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        // The C-free core an app (or its Notification Service Extension) embeds.
        .library(name: "BadgeTree", targets: ["BadgeTree"]),
        // The engine on top of it: json-c, payloads, routing, the stream and its state.
        .library(name: "BadgeFlow", targets: ["BadgeFlow"]),
        .executable(name: "badgeflow", targets: ["BadgeFlowCLI"]),
    ],
    traits: [
        .trait(
            name: "Mimalloc",
            description: "Link the badgeflow executable with mimalloc on Linux (the library never links it). "
                + "Sanitizer builds turn it off with --disable-default-traits."
        ),
        .default(enabledTraits: ["Mimalloc"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `swift package generate-documentation` (make docs): a command plugin, no code in any product.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CJSONC",
            pkgConfig: "json-c",
            providers: [.apt(["libjson-c-dev"])]
        ),
        // SQLite state stores (`--state FILE.sqlite`); only Sources/BadgeFlow/Store touches it.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // RocksDB state stores (`--state FILE.rocksdb`, a folder); only
        // Sources/BadgeFlow/State/RocksDB touches it.
        .systemLibrary(
            name: "CRocksDB",
            pkgConfig: "rocksdb",
            providers: [.apt(["librocksdb-dev"])]
        ),
        // SHA-256 of the inputs a state records (`InputDigest`), with the CPU's SHA extensions
        // (Linux; elsewhere BadgeFlow's own SHA-256). Only Sources/BadgeFlow/State touches it.
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // The executable's allocator (Linux): not a dependency of the library, so apps that
        // embed BadgeFlow keep their own.
        .systemLibrary(
            name: "CMimalloc",
            providers: [.apt(["libmimalloc-dev"])]
        ),
        // Pure Swift: no C module, no json-c, no mimalloc (`make test` checks the linked binary).
        .target(name: "BadgeTree"),
        .target(
            name: "BadgeFlow",
            dependencies: [
                "BadgeTree", "CJSONC", "CSQLite", "CRocksDB",
                .target(name: "CCrypto", condition: .when(platforms: [.linux])),
            ]
        ),
        // The `badgeflow` executable (its folder is not `Sources/badgeflow`: that would differ
        // from `Sources/BadgeFlow` only by case, one folder on a Mac's default disk).
        .executableTarget(
            name: "BadgeFlowCLI",
            dependencies: [
                "BadgeFlow",
                "BadgeTree",
                .target(name: "CMimalloc", condition: .when(platforms: [.linux], traits: ["Mimalloc"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // The release binary carries the Swift runtime and Foundation (Linux): no dynamic
            // linking of their symbols at start-up, no PLT hop on each call into the runtime.
            // The compile flag makes this module import the static SDK's modules, whose link
            // entries name what the static Foundation needs besides itself. Debug builds (tests,
            // sanitizers, `make leaks`) stay dynamic; library products carry no unsafe flags.
            swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux], configuration: .release))],
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux], configuration: .release))]
        ),
        // What the test targets share: the seeded generator, waiting on a condition with a
        // deadline, temporary folders, child processes, and the needs (root, tmpfs) that
        // tests are tagged and skipped by. A plain target under Tests/, in no product.
        .target(
            name: "BadgeFlowTestSupport",
            path: "Tests/BadgeFlowTestSupport"
        ),
        .testTarget(
            name: "BadgeTreeTests",
            dependencies: ["BadgeTree", "BadgeFlowTestSupport", "SharedFileHelper"]
        ),
        // The second process of BadgeTreeTests' shared-file test (no product).
        .executableTarget(
            name: "SharedFileHelper",
            dependencies: ["BadgeTree"],
            path: "Tests/SharedFileHelper"
        ),
        .testTarget(
            name: "BadgeFlowTests",
            dependencies: ["BadgeFlow", "BadgeFlowTestSupport"]
        ),
        .testTarget(
            name: "BadgeFlowCLITests",
            dependencies: ["BadgeFlowCLI", "BadgeFlowTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
