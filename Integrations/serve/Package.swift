// swift-tools-version:6.1
import PackageDescription

// `badgeflow-serve`: HTTP reads of a live state (RunningAsAService, "Reads over HTTP"), in a package of its own so that
// an app depending on the root package's `BadgeTree` resolves no server dependency.
// The root package by path: its identity is its folder's name (the clone's), read here.
let root = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "BadgeFlow"

let package = Package(
    name: "badgeflow-serve",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "badgeflow-serve", targets: ["BadgeFlowServeMain"])
    ],
    dependencies: [
        .package(path: "../.."),
        // No traits: neither swift-configuration nor full Foundation is needed.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The routes and the server, as a library the tests start on a loopback port.
        .target(
            name: "BadgeFlowServe",
            dependencies: [
                .product(name: "BadgeFlow", package: root),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "BadgeFlowServeMain",
            dependencies: [
                "BadgeFlowServe",
                .product(name: "BadgeFlow", package: root),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "BadgeFlowServeTests",
            dependencies: [
                "BadgeFlowServe",
                .product(name: "BadgeFlow", package: root),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
