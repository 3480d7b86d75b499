import Foundation
import TelegramApi
@testable import TelegramFormatting

/// An entity as the fixtures write it: the TL constructor name, offset, length and its one argument as text.
struct EntityRecord: Equatable, CustomStringConvertible {
    var type: String
    var offset: Int
    var length: Int
    var argument: String?

    var description: String { "\(type)(\(offset), \(length)\(argument.map { ", \($0)" } ?? ""))" }

    init(type: String, offset: Int, length: Int, argument: String? = nil) {
        self.type = type
        self.offset = offset
        self.length = length
        self.argument = argument
    }

    init(_ entity: Api.MessageEntity) {
        let (offset, length) = entity.range
        self.offset = Int(offset)
        self.length = Int(length)
        switch entity {
            case .messageEntityBold: type = "messageEntityBold"
            case .messageEntityItalic: type = "messageEntityItalic"
            case .messageEntityUnderline: type = "messageEntityUnderline"
            case .messageEntityStrike: type = "messageEntityStrike"
            case .messageEntitySpoiler: type = "messageEntitySpoiler"
            case .messageEntityCode: type = "messageEntityCode"
            case .messageEntityPre(let c): type = "messageEntityPre"; argument = c.language
            case .messageEntityTextUrl(let c): type = "messageEntityTextUrl"; argument = c.url
            case .messageEntityMentionName(let c): type = "messageEntityMentionName"; argument = String(c.userId)
            case .messageEntityCustomEmoji(let c): type = "messageEntityCustomEmoji"; argument = String(c.documentId)
            case .messageEntityBlockquote(let c): type = "messageEntityBlockquote"; argument = String(c.collapsed)
            case .messageEntityEmail: type = "messageEntityEmail"
            default: type = "other"
        }
    }

    /// From a fixture's JSON object.
    init?(json: [String: Any]) {
        guard let type = json["type"] as? String, let offset = json["offset"] as? Int,
              let length = json["length"] as? Int else { return nil }
        self.type = type
        self.offset = offset
        self.length = length
        if let url = json["url"] as? String { argument = url }
        if let language = json["language"] as? String { argument = language }
        if let id = json["documentId"] as? String { argument = id }
        if let collapsed = json["collapsed"] as? Bool { argument = String(collapsed) }
    }
}

extension FormattedText {
    var records: [EntityRecord] { entities.map(EntityRecord.init) }
}

/// Shorthands for building entities in tests.
enum E {
    static func bold(_ o: Int32, _ l: Int32) -> Api.MessageEntity { .messageEntityBold(.init(offset: o, length: l)) }
    static func italic(_ o: Int32, _ l: Int32) -> Api.MessageEntity { .messageEntityItalic(.init(offset: o, length: l)) }
    static func underline(_ o: Int32, _ l: Int32) -> Api.MessageEntity {
        .messageEntityUnderline(.init(offset: o, length: l))
    }
    static func strike(_ o: Int32, _ l: Int32) -> Api.MessageEntity { .messageEntityStrike(.init(offset: o, length: l)) }
    static func spoiler(_ o: Int32, _ l: Int32) -> Api.MessageEntity {
        .messageEntitySpoiler(.init(offset: o, length: l))
    }
    static func code(_ o: Int32, _ l: Int32) -> Api.MessageEntity { .messageEntityCode(.init(offset: o, length: l)) }
    static func pre(_ o: Int32, _ l: Int32, _ language: String = "") -> Api.MessageEntity {
        .messageEntityPre(.init(offset: o, length: l, language: language))
    }
    static func url(_ o: Int32, _ l: Int32, _ url: String) -> Api.MessageEntity {
        .messageEntityTextUrl(.init(offset: o, length: l, url: url))
    }
    static func mention(_ o: Int32, _ l: Int32, _ user: Int64) -> Api.MessageEntity {
        .messageEntityMentionName(.init(offset: o, length: l, userId: user))
    }
    static func emoji(_ o: Int32, _ l: Int32, _ id: Int64) -> Api.MessageEntity {
        .messageEntityCustomEmoji(.init(offset: o, length: l, documentId: id))
    }
    static func quote(_ o: Int32, _ l: Int32, collapsed: Bool = false) -> Api.MessageEntity {
        .messageEntityBlockquote(.init(collapsed: collapsed, offset: o, length: l))
    }
}

/// The fixtures of Fixtures/formatting (made by Fixtures/formatting/make_telethon_html.py).
enum Fixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/formatting")

    static func lines(_ name: String) -> [[String: Any]] {
        guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else {
            return []
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}

/// SplitMix64: a seeded generator, so a failing property case is the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
