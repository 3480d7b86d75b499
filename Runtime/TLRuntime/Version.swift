// One place for the package's version: the tools print it for `--version`, and a test holds it to CHANGELOG.md.

/// The release of swift-mtproto these modules come from.
public enum SwiftMTProto {
    /// The version, as Semantic Versioning writes it: the newest release in the repository's CHANGELOG.md.
    public static let version = "0.1.0"
}
