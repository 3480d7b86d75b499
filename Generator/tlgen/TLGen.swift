import ArgumentParser
import TLSwiftGen

@main
struct TLGen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tlgen",
        abstract: "The TL schema compiler: Telegram's .tl schemas in, enum-based Swift out.",
        discussion: "Run without arguments to regenerate Generated/ from Schemas/ with Schemas/tlgen.json.",
        version: GeneratorPipeline.version,
        subcommands: [Generate.self, Check.self, Lint.self, Diff.self, Emit.self],
        defaultSubcommand: Generate.self)
}
