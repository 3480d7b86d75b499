import ArgumentParser

@main
struct TL: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tl",
        abstract: "Inspect TL values: hex to tl-json and back.")
}
