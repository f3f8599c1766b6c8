// swift-tools-version:6.1
// package-benchmark suites for the library's inner loops, kept out of the root manifest.
// Run `make bench-lib` from the repository root, or here:
//   swift package --allow-writing-to-package-directory benchmark
import PackageDescription

let package = Package(
    name: "BadgeFlowBenchmarks",
    // package-benchmark needs macOS 13; the observer counter uses Synchronization (macOS 15).
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "BadgeFlow", path: ".."),
        // Naming the traits turns off the default RuntimeInterposer trait: on Linux with
        // Swift 6.3 it pulls in ordo-one/swift-runtime-interposer, which only the ARC metrics
        // (retain/release/object counts) need and these suites do not measure.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        .target(name: "BenchmarkInputs", dependencies: [.product(name: "Benchmark", package: "benchmark")]),
        suite("TreeBenchmarks"),
        suite("StreamBenchmarks"),
        suite("ObservationBenchmarks"),
        suite("SharedFileBenchmarks"),
    ],
    swiftLanguageModes: [.v6]
)

/// A package-benchmark suite: `Benchmarks/<name>/<name>.swift`, run by the benchmark plugin.
func suite(_ name: String) -> Target {
    .executableTarget(
        name: name,
        dependencies: [
            "BenchmarkInputs",
            .product(name: "Benchmark", package: "benchmark"),
            .product(name: "BadgeFlow", package: "BadgeFlow"),
        ],
        path: "Benchmarks/\(name)",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
