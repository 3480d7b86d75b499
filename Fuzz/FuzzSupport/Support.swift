// Shared by every fuzz target: the libFuzzer driver call. A broken property (FuzzProperties) traps here, which is
// how libFuzzer records a finding and saves its input.
import CFuzzerDriver
import FuzzProperties
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Runs libFuzzer's loop over `property`, which sees each input as a byte array; a violation traps. Never returns.
/// The property runs once on an empty input first, so lazily built globals (a checked schema, registries) are made
/// before libFuzzer starts timing inputs: on a loaded machine that set-up alone passed the 10 s per-input limit.
public func runFuzzer(_ property: @escaping @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    _ = property(nil, 0)
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, property))
}

/// The input libFuzzer passes, as an array.
public func input(_ start: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
    guard let start, count > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: start, count: count))
}

/// Runs the property of `target` (FuzzProperties) on one input; a violation is a finding.
public func check(_ target: String, _ data: [UInt8]) -> CInt {
    do {
        guard try checkProperty(of: target, data) else { fatalError("no property for \(target)") }
    } catch {
        fatalError("\(target): fuzz property violated: \(error)")
    }
    return 0
}
