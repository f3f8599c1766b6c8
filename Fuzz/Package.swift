// swift-tools-version:6.0
// The libFuzzer target for the line processor. Build and run with `make fuzz`, which passes
// -sanitize=fuzzer,address; a plain `swift build` here cannot link it (libFuzzer owns main).
import PackageDescription

let package = Package(
    name: "BadgeFlowFuzz",
    dependencies: [.package(name: "BadgeFlow", path: "..")],
    targets: [
        .executableTarget(
            name: "badgeflow-fuzz",
            dependencies: [.product(name: "BadgeFlow", package: "BadgeFlow")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
