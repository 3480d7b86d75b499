// Threads for bulk crypto (file parts), below the priority of everything else in the process.
//
// On two cores a download keeps both busy: the client decrypting parts, a test Telegram in the same machine
// encrypting them. A small call's answer then waits for a scheduler slice behind that work: `getHistory` during
// downloads measured 14–20× its idle p99 (Benchmarks/README.md, "Round trips during downloads"). Run at a lower
// priority, the parts' crypto gives way the moment a thread with a small call to handle wakes, and still gets
// every cycle nothing else wants.
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Event loops whose threads run below the process's other threads: Linux nice +10 (setpriority(2) on the
/// thread), Apple's utility QoS class. Work that takes long and that nobody waits on at once, decrypting or
/// encrypting a file part, goes here, so latency-sensitive work (answering a small call) preempts it.
public enum BulkWork {
    /// How much lower than normal the threads run on Linux (nice values: 0 normal, 19 lowest). Ten leaves them
    /// about a tenth of a core against a busy normal thread, so a transfer still moves on a loaded machine.
    public static let niceIncrement: Int32 = 10

    /// One thread per core, started on first use and kept for the process's life.
    public static let group: MultiThreadedEventLoopGroup = {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, System.coreCount))
        // Each loop lowers its own thread before it runs anything else (`execute` jobs run in order).
        for loop in group.makeIterator() { loop.execute { lowerCurrentThread() } }
        return group
    }()

    /// Lowers the calling thread's scheduling priority as described on the type. Failures are ignored: the
    /// work still runs, at normal priority.
    public static func lowerCurrentThread() {
        #if canImport(Glibc)
        // On Linux each thread has a nice value of its own, and PRIO_PROCESS with 0 names the calling thread
        // (setpriority(2), "BUGS").
        let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, min(19, current + niceIncrement))
        #elseif canImport(Darwin)
        _ = pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0)
        #endif
    }

    /// The current thread's nice value (Linux), for tests; nil elsewhere.
    public static func currentNice() -> Int32? {
        #if canImport(Glibc)
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        #else
        return nil
        #endif
    }
}
