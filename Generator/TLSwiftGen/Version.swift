// The generator's own copy of the package version (it does not depend on the runtime, where TLRuntime's copy
// lives); VersionTests holds both to CHANGELOG.md.

extension GeneratorPipeline {
    /// The release of swift-mtproto this generator comes from, as Semantic Versioning writes it; `tlgen --version`
    /// prints it. Generated files do not carry it, so a release alone changes no generated line.
    public static let version = "0.1.0"
}
