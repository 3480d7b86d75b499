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

/// Event loops whose threads run below the process's other threads: Linux's `SCHED_IDLE` policy, Apple's utility
/// QoS class. Work that takes long and that nobody waits on at once, decrypting or encrypting a file part, goes
/// here, so latency-sensitive work (answering a small call) preempts it.
///
/// On Linux a thread of any other policy that wakes preempts a `SCHED_IDLE` thread at once (sched(7)); a lowered
/// nice value only shortens its turn, and measured no better than normal priority at a download's p99 (nice 10
/// and 19, 2026-12-03). The price: where every core is busy with other work, bulk work gets a small share of one
/// (the kernel weighs an idle-policy thread at 3 against 1,024 for a normal one), so a transfer slows to a crawl
/// rather than slowing that work down.
public enum BulkWork {
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
        // On Linux the policy is each thread's own, and pid 0 names the calling thread (sched_setscheduler(2)).
        var parameters = sched_param(sched_priority: 0)
        _ = sched_setscheduler(0, idlePolicy, &parameters)
        #elseif canImport(Darwin)
        _ = pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0)
        #endif
    }

    /// Whether the calling thread runs lowered as `lowerCurrentThread()` leaves it (Linux, Apple platforms); nil
    /// elsewhere. For tests.
    public static func isCurrentThreadLowered() -> Bool? {
        #if canImport(Glibc)
        return sched_getscheduler(0) == idlePolicy
        #elseif canImport(Darwin)
        return qos_class_self() == QOS_CLASS_UTILITY
        #else
        return nil
        #endif
    }

    #if canImport(Glibc)
    /// `SCHED_IDLE` (linux/sched.h), which Glibc's module leaves out without _GNU_SOURCE.
    private static let idlePolicy: Int32 = 5
    #endif
}
