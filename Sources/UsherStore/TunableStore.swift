/// A store that runs the worker faster with a word about where and when: its own thread for the
/// worker's loops, connections readied before the first message.
public protocol TunableStore: ChatStore {
    /// Readies what the worker's reads and commits need — connections, prepared statements —
    /// so that the first message after a start does not wait for them. The worker calls it once
    /// as it starts; a failure is not an error (the calls connect again when they need to).
    func warmUp() async throws

    /// Where the worker runs its loops and writes: for a store whose calls run on a thread of
    /// its own (`ThreadExecutor`), that thread, so that a call runs where it is made instead of
    /// waking the store's thread and then the caller's. nil: the global executor.
    var workerExecutor: (any TaskExecutor)? { get }
}

extension TunableStore {
    /// Nothing to ready.
    public func warmUp() async throws {}

    public var workerExecutor: (any TaskExecutor)? { nil }
}
