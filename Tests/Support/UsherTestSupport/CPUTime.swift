#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The CPU time the calling thread spends running `body`: what a computation costs, whatever
/// else the machine runs meanwhile. The wall clock (`ContinuousClock.measure`) also counts the
/// time the thread waits for a core, which a test run that fills both cores stretches many
/// times; a bound on CPU time fails only when the work itself grows.
public func cpuTime(_ body: () throws -> Void) rethrows -> Duration {
    let start = threadCPUClock()
    try body()
    return threadCPUClock() - start
}

private func threadCPUClock() -> Duration {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
}
