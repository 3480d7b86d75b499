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
public func runFuzzer(_ property: @escaping @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
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
