import Foundation
import UsherStore

/// One connection used from one thread of its own (`ThreadExecutor`): every blocking libpq call
/// runs there, never on the cooperative thread pool — and a worker stage the store runs on that
/// thread (`PostgresStore.workerExecutor`) calls it without a thread switch. A broken connection
/// is dropped and made again on the next call, so a server restart costs the calls made while
/// it was down (transient errors the worker retries with backoff), nothing more.
final class PGSession: @unchecked Sendable {
    // @unchecked: `connection` is only touched on the session's thread (or, without one, its
    // owner's: the store's reading thread).
    /// The thread the connection is used on (nil: the caller's own, `runHere` only).
    let executor: ThreadExecutor?
    private let conninfo: String
    private var connection: PGConnection?
    private var closed = false
    /// Runs once on every new connection (LISTEN, session settings).
    private let setup: (PGConnection) throws(StoreError) -> Void
    /// Shown as `application_name` in `pg_stat_activity` unless the URL names one.
    private let label: String

    /// `thread`: the session has a thread of its own for `run` (else its owner uses it on its
    /// own thread, `runHere`).
    init(_ conninfo: String, label: String, thread: Bool = true,
         setup: @escaping (PGConnection) throws(StoreError) -> Void = { _ in }) {
        self.conninfo = conninfo
        self.executor = thread ? ThreadExecutor(name: label, spin: .zero) : nil
        self.setup = setup
        self.label = label
    }

    deinit { executor?.stop() }

    /// Runs `body` with the connection on the session's thread, connecting first when there is
    /// none: at once when the caller is on that thread (a worker stage the store put there),
    /// else by going there and back.
    func run<T: Sendable>(_ body: @escaping @Sendable (PGConnection) throws -> T) async throws -> T {
        guard let executor else { preconditionFailure("PGSession.run on a session without a thread") }
        return try await executor.run(stopped: Self.closedError) { try self.runHere(body) }
    }

    /// Runs `body` on the session's thread without waiting for it; what it throws is dropped.
    func submit(_ body: @escaping @Sendable (PGConnection) throws -> Void) {
        _ = executor?.submit { _ = try? self.runHere(body) }
    }

    /// `run` without leaving the caller's thread: for a session without a thread of its own,
    /// used on its owner's (the commit sessions on the reading thread).
    /// `connect: false`: not connecting when there is no usable connection, but throwing (the
    /// listener's reading thread uses the connection its own thread made, and hands it back).
    func runHere<T>(connect: Bool = true, _ body: (PGConnection) throws -> T) throws -> T {
        let db = try connected(connect: connect)
        do {
            return try body(db)
        } catch {
            dropIfLost(db, error)
            throw error
        }
    }

    /// `runHere` for a body that waits for the server without blocking the thread
    /// (`PGConnection.pipeline(_:on:)`).
    func runHere<T>(_ body: (PGConnection) async throws -> T) async throws -> T {
        let db = try connected()
        do {
            return try await body(db)
        } catch {
            dropIfLost(db, error)
            throw error
        }
    }

    /// The connection, made now when there is none (or it broke) and `connect`.
    private func connected(connect: Bool = true) throws(StoreError) -> PGConnection {
        if closed { throw Self.closedError }
        if let c = connection, c.isOK { return c }
        connection = nil
        if !connect { throw StoreError("pg-connection", "lost the connection to PostgreSQL", transient: true) }
        let c = try PGConnection(conninfo)
        try c.script("SELECT set_config('application_name', \(PGText.literal(label)), false) WHERE current_setting('application_name') = ''")
        try setup(c)
        connection = c
        return c
    }

    /// After `error`: a connection that broke is made again on the next call.
    private func dropIfLost(_ db: PGConnection, _ error: any Error) {
        if !db.isOK || (error as? StoreError)?.code == "pg-connection" { connection = nil }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    static func transaction<T>(_ db: PGConnection, _ body: () throws -> T) throws -> T {
        try db.script("BEGIN")
        do {
            let value = try body()
            try db.script("COMMIT")
            return value
        } catch {
            if db.isOK { try? db.script("ROLLBACK") }
            throw error
        }
    }

    /// Closes the connection from the thread that uses it (a session without a thread of its own).
    func closeHere() {
        closed = true
        connection = nil
    }

    func close() async {
        guard let executor else { return }
        try? await executor.run(stopped: Self.closedError) { self.closeHere() }
        executor.stop()
    }

    static let closedError = StoreError("closed", "the PostgreSQL store is closed")
}
