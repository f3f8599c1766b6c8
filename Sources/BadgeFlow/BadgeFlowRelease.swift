/// The release of BadgeFlow this build is.
///
/// The one place the version is written: `badgeflow --version` prints it, and tests check
/// that README's `.package(url: …, from: "X")` line names the same release. Bump it here and
/// in README together when tagging a release.
///
/// ```swift
/// print(BadgeFlowRelease.version)   // "0.1.0"
/// ```
///
/// (Not named `BadgeFlowVersion`: the symbol-graph extractor leaves out public symbols named
/// `<Module>Version…`, so such a type would be missing from the documentation.)
public enum BadgeFlowRelease {
    /// The semantic version of this release, such as `"0.1.0"`.
    public static let version = "0.1.0"
}
