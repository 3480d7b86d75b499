import Testing
@testable import TLSchema
@testable import TLSwiftGen

/// The secret-chat adapters: each line follows the layer's own definitions, and a layer the adapter cannot fill is
/// an error naming the field, not a guess.
@Suite struct SecretChatAdapterTests {
    static func adapter(_ text: String, namespace: String = "S") throws -> String {
        try GeneratorPipeline.emitter(schemaText: text, displayName: "s.tl", namespace: namespace, fileCount: 1,
                                      embedSchema: false, layer: nil, exceptions: KnownIDException.all)
            .secretChatAdapterFile().contents
    }

    static func layer(_ number: Int) throws -> String {
        try adapter(try readText(Paths.schema("secret/layer\(number).tl")), namespace: "SecretApi\(number)")
    }

    @Test func eachLayerGetsTheLinesItsDefinitionsCallFor() throws {
        let eight = try Self.layer(8)
        #expect(eight.contains("extension SecretApi8: SecretLayerSchema {"))
        #expect(!eight.contains("wrap("))
        // Layer 8: random_bytes in every message, the file name as a field, media required, no timer.
        #expect(eight.contains(".decryptedMessageService(.init(randomId: randomID, randomBytes: randomBytes(), action: action))"))
        #expect(eight.contains("var media = SecretApi8.DecryptedMessageMedia.decryptedMessageMediaEmpty"))
        #expect(eight.contains("fileName: d.fileName)"))
        #expect(eight.contains("return (text: c.message, ttl: 0, document: document)"))

        let fortySix = try Self.layer(46)
        #expect(fortySix.contains("extension SecretApi46: LayeredSecretLayerSchema {"))
        #expect(fortySix.contains("if case .decryptedMessageMediaDocument(let d)? = c.media {"))
        #expect(fortySix.contains("size: Int32(clamping: d.size)"))
        #expect(fortySix.contains("size: Int64(d.size)"))
        #expect(fortySix.contains(".decryptedMessageService(.init(randomId: randomID, action: action))"))

        // Layer 143 made the document's size a long.
        let latest = try Self.layer(144)
        #expect(latest.contains("document = (key: d.key, iv: d.iv, size: d.size,"))
        #expect(!latest.contains("clamping"))
        #expect(try Self.layer(144) == latest)
    }

    @Test func aLayerTheAdapterCannotFillIsAnError() throws {
        let base = """
            decryptedMessageService#73164160 random_id:long action:DecryptedMessageAction = DecryptedMessage;
            decryptedMessageActionNoop#a82fdd63 = DecryptedMessageAction;
            documentAttributeFilename#15590068 file_name:string = DocumentAttribute;
            decryptedMessageMediaDocument#7afe8ae2 thumb:bytes thumb_w:int thumb_h:int mime_type:string size:int key:bytes iv:bytes attributes:Vector<DocumentAttribute> caption:string = DecryptedMessageMedia;

            """
        let fine = base + "decryptedMessage flags:# random_id:long ttl:int message:string media:flags.9?DecryptedMessageMedia = DecryptedMessage;\n"
        #expect(try Self.adapter(fine).contains("extension S: SecretLayerSchema {"))
        // A required field the adapter has no value for.
        let extra = base + "decryptedMessage flags:# random_id:long ttl:int message:string media:flags.9?DecryptedMessageMedia sticker:long = DecryptedMessage;\n"
        #expect { try Self.adapter(extra) } throws: {
            "\($0)".contains("secret-chat adapter: no value for decryptedMessage's required field sticker")
        }
        // Media required, as in layer 8, but no empty media to send without a document.
        let required = base + "decryptedMessage random_id:long ttl:int message:string media:DecryptedMessageMedia = DecryptedMessage;\n"
        #expect { try Self.adapter(required) } throws: {
            "\($0)".contains("secret-chat adapter: no constructor decryptedMessageMediaEmpty")
        }
        let noMedia = base + "decryptedMessage random_id:long message:string = DecryptedMessage;\n"
        #expect { try Self.adapter(noMedia) } throws: { "\($0)".contains("secret-chat adapter: decryptedMessage has no media") }
    }
}
