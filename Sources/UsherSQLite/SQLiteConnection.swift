internal import CSQLite
import Foundation
import UsherJSON
import UsherStore

/// One SQLite connection: the only owner of a `sqlite3` handle and of its prepared statements.
///
/// `@unchecked Sendable`: the handle is opened in SQLite's multi-thread mode
/// (`SQLITE_OPEN_NOMUTEX`), in which "a single database connection [may not be] used
/// simultaneously in two or more threads". `SQLiteStore` confines every use to the
/// connection's `ThreadExecutor`, one call at a time, which is exactly that guarantee.
final class SQLiteConnection: @unchecked Sendable {
    private var db: OpaquePointer?
    /// Prepared statements of `Query`, by raw value, prepared on first use and kept.
    private var cached: [OpaquePointer?]
    /// Prepared statements of other SQL text (migrations, tools), by text.
    private var adhoc: [String: OpaquePointer] = [:]
    let path: String
    /// A reusable buffer for JSON text bound to statements.
    var scratch = JSONWriter()
    /// States this connection wrote or read, with their JSON text: a read whose text is byte for
    /// byte the cached one skips decoding. Validated by content, so never stale.
    var decoded = StateCache()
    /// What `WALCheckpointer.attach` returned, released when the connection closes.
    private var walHookContext: UnsafeMutableRawPointer?
    /// The checkpointer attached, attached again when the connection is reopened.
    private var checkpointer: WALCheckpointer?
    private let readOnly: Bool
    /// The file the connection opened (nil for `:memory:`): a path that names another file, or
    /// none, means the database was deleted or replaced under the store (`checkFile`).
    let identity: FileIdentity?
    /// Set after an error that leaves the handle read-only: it is opened again (`reopen`)
    /// before its next use.
    var isStale = false
    /// `checkFile` found the path naming another file, or none.
    private var replaced = false
    /// When `checkFile` last looked at the path.
    private var checkedFile = ContinuousClock.now

    /// Opens (creating if needed) the database file at `path`.
    init(path: String, readOnly: Bool = false) throws(StoreError) {
        _ = Self.configured
        self.path = path
        self.readOnly = readOnly
        self.cached = Array(repeating: nil, count: Query.allCases.count)
        db = try Self.open(path, flags: readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        identity = FileIdentity(path: path)
    }

    private static func open(_ path: String, flags: Int32) throws(StoreError) -> OpaquePointer {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(handle)
            throw StoreError("sqlite-open", "cannot open SQLite database '\(path)': \(message)")
        }
        sqlite3_extended_result_codes(handle, 1)
        return handle
    }

    /// Closes the handle and opens the same file again (never creating it), then runs
    /// `configure` on it and attaches the checkpointer again. For a handle SQLite opened
    /// read-only because the file was not writable then: it stays read-only after the file is
    /// made writable, a new one is not. Throws `fileReplaced` when the path names another file
    /// now; when the file cannot be opened at all, keeps the old handle and throws.
    func reopen(configure: (SQLiteConnection) throws -> Void) throws {
        try checkFile(every: .zero)
        let fresh = try Self.open(path, flags: readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE)
        if let identity, !identity.isStill(at: path) {
            sqlite3_close_v2(fresh)
            throw StoreError.fileReplaced(path)
        }
        let checkpointer = checkpointer
        close()
        db = fresh
        try configure(self)
        if let checkpointer { attach(checkpointer) }
    }

    /// Throws `fileReplaced` when the path no longer names the file this connection has open
    /// (deleted, or another file moved there): what is written through it would go to a file
    /// nobody else opens. A `stat` of the path, at most once per `every`; once it found the file
    /// gone, every call throws.
    func checkFile(every interval: Duration = .milliseconds(250)) throws(StoreError) {
        guard let identity else { return }
        if replaced { throw StoreError.fileReplaced(path) }
        let now = ContinuousClock.now
        guard now - checkedFile >= interval else { return }
        checkedFile = now
        if !identity.isStill(at: path) {
            replaced = true
            throw StoreError.fileReplaced(path)
        }
    }

    deinit {
        if db != nil { close() }
    }

    var isOpen: Bool { db != nil }

    /// The handle, for the C API calls this type does not wrap (checkpoints).
    var rawHandle: OpaquePointer? { db }

    /// Hands this connection's checkpoints to `checkpointer` (see `WALCheckpointer`).
    func attach(_ checkpointer: WALCheckpointer) {
        guard let db, walHookContext == nil else { return }
        walHookContext = checkpointer.attach(writer: db)
        self.checkpointer = checkpointer
    }

    /// Process-wide settings, once, before the first connection: no memory statistics (they
    /// serialise every allocation of every connection on one mutex, ≈ 15% of a commit here).
    private static let configured: Bool = {
        usher_sqlite_disable_memstatus() == SQLITE_OK
    }()

    static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    /// Finalizes every statement and closes the handle. Idempotent.
    func close() {
        for case let s? in cached { sqlite3_finalize(s) }
        for s in adhoc.values { sqlite3_finalize(s) }
        cached = Array(repeating: nil, count: cached.count)
        adhoc = [:]
        if let db, let walHookContext { WALCheckpointer.detach(writer: db, context: walHookContext) }
        walHookContext = nil
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    private func handle() throws(StoreError) -> OpaquePointer {
        guard let db else { throw StoreError("closed", "the SQLite store '\(path)' is closed") }
        return db
    }

    /// A cached statement for one of the store's queries, reset and ready to bind.
    func statement(_ query: Query) throws(StoreError) -> Statement {
        if let s = cached[query.rawValue] { return Statement(handle: s, db: db!) }
        let s = try prepare(query.sql)
        cached[query.rawValue] = s
        return Statement(handle: s, db: db!)
    }

    /// A cached statement for any SQL text (one statement).
    func statement(sql: String) throws(StoreError) -> Statement {
        if let s = adhoc[sql] { return Statement(handle: s, db: db!) }
        let s = try prepare(sql)
        adhoc[sql] = s
        return Statement(handle: s, db: db!)
    }

    private func prepare(_ sql: String) throws(StoreError) -> OpaquePointer {
        let db = try handle()
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            throw SQLiteConnection.error(rc, db: db, doing: "preparing `\(sql.prefix(80))`")
        }
        return stmt
    }

    /// Runs SQL text that may hold several statements and returns no rows (DDL, pragmas).
    func execute(_ sql: String) throws(StoreError) {
        let db = try handle()
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(message)
            throw SQLiteConnection.error(rc, message: text, doing: "running `\(sql.prefix(80))`")
        }
    }

    /// Runs a cached statement of `Query` that returns no rows.
    func run(_ query: Query) throws(StoreError) {
        let s = try statement(query)
        defer { s.reset() }
        _ = try s.step()
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { db.map { Int(sqlite3_changes($0)) } ?? 0 }

    var lastInsertRowID: Int64 { db.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// Whether a transaction is open (not in autocommit mode).
    var inTransaction: Bool { db.map { sqlite3_get_autocommit($0) == 0 } ?? false }

    /// Rolls back an open transaction, if any, ignoring errors: used on the way out of a failure.
    func rollbackQuietly() {
        guard let db, sqlite3_get_autocommit(db) == 0 else { return }
        sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
    }

    /// Sets the busy timeout: how long SQLite itself waits for a lock before returning BUSY.
    func setBusyTimeout(milliseconds: Int) throws(StoreError) {
        sqlite3_busy_timeout(try handle(), Int32(clamping: milliseconds))
    }

    /// Lowers the longest string or blob this connection accepts (tests make a commit fail with it).
    func setLengthLimit(_ bytes: Int) throws(StoreError) {
        sqlite3_limit(try handle(), SQLITE_LIMIT_LENGTH, Int32(clamping: bytes))
    }

    /// Reads one integer: `PRAGMA x` or `SELECT …`.
    func integer(_ sql: String) throws(StoreError) -> Int64 {
        let s = try statement(sql: sql)
        defer { s.reset() }
        guard try s.step() else { return 0 }
        return s.int64(0)
    }

    /// Reads one text value.
    func text(_ sql: String) throws(StoreError) -> String? {
        let s = try statement(sql: sql)
        defer { s.reset() }
        guard try s.step() else { return nil }
        return s.optionalText(0)
    }

    /// The code of errors that leave the handle unable to write until it is opened again
    /// (`reopen`): SQLite opens a file it may not write read-only, and keeps it so.
    static let reopenCode = "sqlite-readonly"

    static func error(_ rc: Int32, db: OpaquePointer?, doing what: String) -> StoreError {
        let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        return error(rc, message: message, doing: what)
    }

    static func error(_ rc: Int32, message: String, doing what: String) -> StoreError {
        // Transient: what the machine's owner can mend while the store waits (a lock, a full
        // disk, a file or folder made read-only); the rest is the data's or the schema's, and
        // trying again cannot mend it (docs/operations.md).
        switch rc & 0xff {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return StoreError("busy", "the database is locked by another connection (\(message)) while \(what)", transient: true)
        case SQLITE_CONSTRAINT:
            return StoreError("sqlite-constraint", "\(message) while \(what)")
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return StoreError("sqlite-corrupt", "\(message) while \(what)")
        case SQLITE_FULL:
            return StoreError("sqlite-full", "\(message) while \(what): the disk is full; free some space", transient: true)
        case SQLITE_IOERR:
            return StoreError("sqlite-io", "\(message) (code \(rc)) while \(what)", transient: true)
        // Not SQLITE_READONLY_DBMOVED (8 | 4 << 8, a macro Swift does not import): a moved file.
        case SQLITE_READONLY where rc != SQLITE_READONLY | (4 << 8), SQLITE_CANTOPEN, SQLITE_PERM:
            return StoreError(Self.reopenCode, "\(message) (code \(rc)) while \(what): the database file, its -wal and -shm "
                              + "files and their folder must be writable by this process", transient: true)
        default:
            return StoreError("sqlite", "\(message) (code \(rc)) while \(what)")
        }
    }
}

/// A file's device and inode: what a path named when a connection opened it.
struct FileIdentity: Sendable, Equatable {
    let device: UInt64
    let inode: UInt64

    /// What `path` names now; nil for `:memory:`, or when it cannot be looked at.
    init?(path: String) {
        guard path != ":memory:", !path.isEmpty else { return nil }
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }

    /// Whether `path` still names this file: false when it names another one or nothing at
    /// all; true when it cannot be told (a folder this process may not search), so that a
    /// passing permission problem does not end the store.
    func isStill(at path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0 else { return errno != ENOENT && errno != ENOTDIR }
        return UInt64(st.st_dev) == device && UInt64(st.st_ino) == inode
    }
}

/// A prepared statement owned by a `SQLiteConnection` (which finalizes it). Bind, step, read the
/// columns before the next step, reset.
struct Statement {
    let handle: OpaquePointer
    let db: OpaquePointer

    /// Steps once: `true` when a row is ready, `false` when done.
    @inline(__always)
    func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let sql = sqlite3_sql(handle).map { String(cString: $0) } ?? "?"
        let error = SQLiteConnection.error(rc, db: db, doing: "running `\(sql.prefix(80))`")
        sqlite3_reset(handle)
        throw error
    }

    @inline(__always)
    func reset() { sqlite3_reset(handle) }

    // MARK: binding (1-based)

    @inline(__always)
    func bind(_ i: Int32, _ value: String) {
        var v = value
        v.withUTF8 { buf in
            if let base = buf.baseAddress, buf.count > 0 {
                _ = base.withMemoryRebound(to: CChar.self, capacity: buf.count) {
                    sqlite3_bind_text(handle, i, $0, Int32(buf.count), usher_sqlite_transient())
                }
            } else {
                sqlite3_bind_text(handle, i, "", 0, usher_sqlite_transient())
            }
        }
    }

    @inline(__always)
    func bind(_ i: Int32, _ value: String?) {
        if let value { bind(i, value) } else { sqlite3_bind_null(handle, i) }
    }

    @inline(__always)
    func bind(_ i: Int32, bytes: UnsafeBufferPointer<UInt8>) {
        if let base = bytes.baseAddress, bytes.count > 0 {
            _ = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, i, $0, Int32(bytes.count), usher_sqlite_transient())
            }
        } else {
            sqlite3_bind_text(handle, i, "", 0, usher_sqlite_transient())
        }
    }

    @inline(__always)
    func bind(_ i: Int32, _ value: Int64) { sqlite3_bind_int64(handle, i, value) }

    @inline(__always)
    func bind(_ i: Int32, _ value: Int) { sqlite3_bind_int64(handle, i, Int64(value)) }

    @inline(__always)
    func bind(_ i: Int32, _ value: Bool) { sqlite3_bind_int64(handle, i, value ? 1 : 0) }

    @inline(__always)
    func bind(_ i: Int32, _ value: Double) { sqlite3_bind_double(handle, i, value) }

    @inline(__always)
    func bind(_ i: Int32, _ value: Date) { sqlite3_bind_double(handle, i, value.timeIntervalSince1970) }

    // MARK: columns (0-based)

    @inline(__always)
    func int64(_ i: Int32) -> Int64 { sqlite3_column_int64(handle, i) }

    @inline(__always)
    func int(_ i: Int32) -> Int { Int(sqlite3_column_int64(handle, i)) }

    @inline(__always)
    func double(_ i: Int32) -> Double { sqlite3_column_double(handle, i) }

    @inline(__always)
    func date(_ i: Int32) -> Date { Date(timeIntervalSince1970: sqlite3_column_double(handle, i)) }

    @inline(__always)
    func isNull(_ i: Int32) -> Bool { sqlite3_column_type(handle, i) == SQLITE_NULL }

    @inline(__always)
    func text(_ i: Int32) -> String { optionalText(i) ?? "" }

    @inline(__always)
    func optionalText(_ i: Int32) -> String? {
        guard let p = sqlite3_column_text(handle, i) else { return nil }
        let n = Int(sqlite3_column_bytes(handle, i))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    /// The column's bytes, valid only inside `body` (until the next step or reset).
    @inline(__always)
    func withBytes<T>(_ i: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let p = sqlite3_column_text(handle, i)
        let n = Int(sqlite3_column_bytes(handle, i))
        return try body(UnsafeBufferPointer(start: p, count: p == nil ? 0 : n))
    }
}
