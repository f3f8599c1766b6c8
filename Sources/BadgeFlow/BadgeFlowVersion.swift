/// The release of BadgeFlow this build is.
///
/// The one place the version is written: `badgeflow --version` prints it, and a test checks
/// that README's `.package(url: …, from: "X")` line names the same release. Bump it here and
/// in README together when tagging a release.
///
/// ```swift
/// print(BadgeFlowVersion.string)   // "0.1.0"
/// ```
public enum BadgeFlowVersion {
    /// The semantic version of this release, such as `"0.1.0"`.
    public static let string = "0.1.0"
}
