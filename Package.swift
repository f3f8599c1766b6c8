// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "BadgeFlow",
    products: [
        .library(name: "BadgeFlow", targets: ["BadgeFlow"]),
        .executable(name: "badgeflow", targets: ["badgeflow"]),
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
    ],
    targets: [
        .systemLibrary(
            name: "CJSONC",
            pkgConfig: "json-c",
            providers: [.apt(["libjson-c-dev"])]
        ),
        // The executable's allocator (Linux): not a dependency of the library, so apps that
        // embed BadgeFlow keep their own.
        .systemLibrary(
            name: "CMimalloc",
            providers: [.apt(["libmimalloc-dev"])]
        ),
        .target(
            name: "BadgeFlow",
            dependencies: ["CJSONC"]
        ),
        .executableTarget(
            name: "badgeflow",
            dependencies: [
                "BadgeFlow",
                .target(name: "CMimalloc", condition: .when(platforms: [.linux], traits: ["Mimalloc"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "BadgeFlowTests",
            dependencies: ["BadgeFlow"]
        ),
        .testTarget(
            name: "badgeflowTests",
            dependencies: ["badgeflow"]
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
