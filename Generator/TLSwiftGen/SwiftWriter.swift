// A tiny indenting text builder for the emitter.

final class SwiftWriter {
    private(set) var text = ""
    private var level = 0

    func line(_ s: String) {
        if s.isEmpty {
            text += "\n"
            return
        }
        for (i, part) in s.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if i > 0 && part.isEmpty {
                text += "\n"
                continue
            }
            text += String(repeating: "    ", count: level) + part + "\n"
        }
    }

    /// Appends text verbatim (headers, embedded schema).
    func raw(_ s: String) { text += s }

    func block(_ opener: String, _ body: () -> Void) {
        line(opener + " {")
        level += 1
        body()
        level -= 1
        line("}")
    }

    func indented(_ body: () -> Void) {
        level += 1
        body()
        level -= 1
    }
}

extension String {
    var trimmingTrailingNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}
