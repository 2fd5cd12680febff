import Foundation

/// A store that learns when something was written (a NOTIFY, a commit by this process on the
/// same file), so that the worker waits for that instead of polling.
public protocol SignallingStore: ChatStore {
    /// Notified each time this store learns that something was written, or nil while it cannot
    /// hear of writes (PostgreSQL between losing its LISTEN connection and getting it back: the
    /// worker polls then). Its generation, taken
    /// before a read, lets the worker wait for a new message without a query
    /// (`ChangeSignal.wait(since:timeout:)`) while its batches are written.
    var changeSignal: ChangeSignal? { get }

    /// What the change signals say of the messages (PostgreSQL's NOTIFY carries each message's
    /// `seq`), or nil when a signal since `generation` (of `changeSignal`) did not say which
    /// messages it was for — or the store's signals never do. When a read that began at
    /// `generation` covered (`Intake.readThrough`) both `complete` and `newest`, reading again
    /// would find nothing, and the worker does not.
    func notified(since generation: UInt64) -> Notified?
}

extension SignallingStore {
    /// Signals that do not name their messages.
    public func notified(since generation: UInt64) -> Notified? { nil }
}

/// What a store's change signals say of the inbound messages (`SignallingStore.notified(since:)`).
public struct Notified: Sendable, Equatable {
    /// Every inbound message above this `seq` is signalled; those at or below it may have been
    /// written before the store was listening (a backlog), and were not.
    public var complete: Int64
    /// The newest `seq` signalled.
    public var newest: Int64

    public init(complete: Int64, newest: Int64) {
        self.complete = complete
        self.newest = newest
    }

    /// Whether a read that covered everything through `seq` left nothing signalled to read.
    public func covered(by seq: Int64) -> Bool { seq >= complete && seq >= newest }
}

