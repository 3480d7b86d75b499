// Constructor IDs Telegram assigned that the CRC rule does not reproduce. The built-in list has a reason each
// (source: Schemas/PROVENANCE.md, "Known exceptions"); a generator configuration adds its own for upstream
// files (TDLib's renamed and ID-sharing helpers). Where a variant of the rule does reproduce the ID, the checker
// still verifies it with that variant, so an exception cannot hide a typo.

/// A constructor whose published ID the CRC rule does not reproduce, with how the checker still verifies it and
/// why it is accepted.
public struct KnownIDException: Sendable, Hashable {
    /// How the checker verifies an exception's ID.
    public enum Verification: Sendable, Hashable {
        /// The ID is the CRC computed without rule 4 (`bytes` kept as `bytes`).
        case withoutBytesNormalization
        /// The ID is the CRC of an older spelling of the same definition.
        case olderSpelling(String)
        /// No variant reproduces it; accepted as published.
        case accepted
    }

    /// The constructor's name.
    public var name: String
    /// Its published ID.
    public var id: UInt32
    /// How the ID is verified.
    public var verification: Verification
    /// Why the exception exists.
    public var reason: String
    /// The entry whose ID this one deliberately reuses (TDLib's `invokeWithReCaptchaPrefix` shares
    /// `invokeWithReCaptcha`'s): the duplicate-ID check accepts exactly that pair.
    public var sharedWith: String?

    /// An exception.
    public init(name: String, id: UInt32, verification: Verification, reason: String, sharedWith: String? = nil) {
        self.name = name
        self.id = id
        self.verification = verification
        self.reason = reason
        self.sharedWith = sharedWith
    }

    /// Telegram's exceptions, each with its reason (`Schemas/PROVENANCE.md`, "Known exceptions").
    public static let all: [KnownIDException] = [
        KnownIDException(name: "ipPortSecret", id: 0x3798_2646, verification: .withoutBytesNormalization,
                         reason: "assigned from the definition with `secret:bytes` left as bytes"),
        KnownIDException(name: "decryptedMessageMediaDocument", id: 0x6ABD_9782, verification: .withoutBytesNormalization,
                         reason: "layer-143 secret-chat constructor, assigned without the bytes->string step"),
        KnownIDException(name: "msg_container", id: 0x73F1_F8DC,
                         verification: .olderSpelling("msg_container messages:vector message = MessageContainer"),
                         reason: "assigned when the field was written `vector<message>`; now `vector<%Message>`"),
        KnownIDException(name: "accessPointRule", id: 0x4679_B65F, verification: .accepted,
                         reason: "simple-config type; no spelling of the definition reproduces the published ID"),
        KnownIDException(name: "help.configSimple", id: 0x5A59_2A6C, verification: .accepted,
                         reason: "simple-config type; no spelling of the definition reproduces the published ID"),
    ]

    /// Whether `declaration` carries this exception's ID and the exception's own verification holds.
    func accepts(_ declaration: Declaration) -> Bool {
        guard declaration.name == name, declaration.explicitID == id else { return false }
        switch verification {
        case .withoutBytesNormalization: return CRC32.checksum(declaration.normalizedText(bytesAsString: false)) == id
        case .olderSpelling(let text): return CRC32.checksum(text) == id
        case .accepted: return true
        }
    }
}
