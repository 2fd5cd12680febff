import UsherSQLite
import UsherStore

/// Keeps the lines in memory (tests, embedding).
public final class MemorySink: LineSink {
    private let stored = Locked<[String]>([])

    public init() {}

    public func write(_ lines: [String]) throws {
        stored.withLock { $0.append(contentsOf: lines) }
    }

    /// Every line written so far.
    public var lines: [String] { stored.withLock { $0 } }

    /// Returns the lines written so far and forgets them.
    public func take() -> [String] {
        stored.withLock { s in
            defer { s.removeAll() }
            return s
        }
    }
}
