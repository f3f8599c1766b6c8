// swift-tools-version:6.0
// Benchmarks, kept out of the root manifest: `make bench-lib` (or `swift run -c release` here).
import PackageDescription

let package = Package(
    name: "BadgeFlowBenchmarks",
    dependencies: [.package(name: "BadgeFlow", path: "..")],
    targets: [
        .executableTarget(
            name: "badgeflow-bench",
            dependencies: [.product(name: "BadgeFlow", package: "BadgeFlow")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
