// How TL names become Swift names. Follows Telegram-iOS's TelegramApi: types keep their TL names
// (`Api.messages.Messages`), constructors become cases (`.user`), payloads `Cons_user`, fields lowerCamelCase.

enum Naming {
    /// Swift keywords that need backticks where they are declared (`let \`default\`: Bool`).
    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows", "static",
        "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer", "do",
        "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while",
        "as", "false", "is", "nil", "super", "throws", "true", "try", "Any", "some", "any",
    ]

    /// Names that would shadow or collide with members every generated payload has, or that Swift gives meaning to
    /// even in backticks (`x.self` is x itself). Renamed, and the TL name is kept in descriptions and errors.
    static let renamed: [String: String] = [
        "self": "isSelf",
        "Type": "type_",
        "Protocol": "protocol_",
        "init": "init_",
    ]

    /// `access_hash` -> `accessHash`; leading and doubled underscores are dropped.
    static func camelCase(_ name: String) -> String {
        let parts = name.split(separator: "_", omittingEmptySubsequences: true)
        guard let first = parts.first else { return name }
        var result = String(first)
        for part in parts.dropFirst() { result += part.prefix(1).uppercased() + part.dropFirst() }
        return result
    }

    /// A property or parameter name as declared.
    static func fieldName(_ tlName: String) -> String {
        let camel = camelCase(tlName)
        if let renamed = renamed[camel] { return renamed }
        return camel
    }

    /// Escapes a keyword with backticks where a declaration or a bare reference needs it.
    static func escaped(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }
}
