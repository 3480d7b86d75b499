// The client's task executor: jobs enqueued on the loop's own thread run in batches, in order, without starving
// the loop's other work.
import MTProtoClient
import NIOCore
import NIOPosix
import Synchronization
import Testing

@Suite struct EventLoopTaskExecutorTests {
    final class Observed: Sendable {
        let order = Mutex<[Int]>([])
        let onLoop = Mutex(true)
        let ran = Atomic(false)
    }

    /// Tasks made on the loop run in the order they were made, and each runs on the loop.
    @Test func tasksMadeOnTheLoopRunInOrder() async {
        let executor = EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next())
        let record = Observed()
        await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: Void.self) { tasks in
                for index in 0..<200 {
                    tasks.addTask {
                        let inLoop = executor.eventLoop.inEventLoop
                        record.onLoop.withLock { $0 = $0 && inLoop }
                        record.order.withLock { $0.append(index) }
                    }
                }
            }
        }
        let order = record.order.withLock { $0 }, onLoop = record.onLoop.withLock { $0 }
        #expect(order == Array(0..<200))
        #expect(onLoop)
    }

    /// A task that keeps yielding does not hold the loop: work scheduled on the loop meanwhile runs after at most
    /// a couple of its turns (a drain that ran jobs until none were left would never let it run).
    @Test func yieldingTaskLetsTheLoopRun() async {
        let executor = EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next())
        let record = Observed()
        let turns = await Task(executorPreference: executor) {
            // Once resumed from the loop itself, the task runs inside a batch of the executor's jobs.
            await Task.yield()
            executor.eventLoop.execute { record.ran.store(true, ordering: .relaxed) }
            var turns = 0
            while !record.ran.load(ordering: .relaxed), turns < 1_000 {
                await Task.yield()
                turns += 1
            }
            return turns
        }.value
        let sawIt = record.ran.load(ordering: .relaxed)
        #expect(sawIt)
        #expect(turns <= 2)
    }
}
