internal import CSQLite
import Foundation
@_spi(Bench) import UsherSQLite

/// A bare SQLite connection for the benchmark's ceiling loop and its other-connection writers:
/// the C API called directly, no store in between.
final class RawDB: @unchecked Sendable {
    // @unchecked: each RawDB is used by one thread at a time (multi-thread mode).
    let db: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    /// The store's checkpointer, when this connection writes with the store's arrangement.
    private(set) var checkpointer: WALCheckpointer?
    private var hookContext: UnsafeMutableRawPointer?

    /// `tuning` applies the benchmark's `--cache-kib`/`--mmap-mib` (as the store would); a
    /// `checkpointer` takes the checkpoints off this connection's commits, as `SQLiteStore` does.
    init(path: String, synchronous: String = "NORMAL", tuning: Tuning = Tuning(), checkpointer: WALCheckpointer? = nil) {
        var h: OpaquePointer?
        guard sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
              let h else { fatalError("cannot open \(path)") }
        db = h
        sqlite3_busy_timeout(db, 5000)
        if let pageSize = tuning.pageSize { exec("PRAGMA page_size = \(pageSize)") }   // a new file only
        exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = \(synchronous); PRAGMA foreign_keys = ON; "
             + "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -\(tuning.cacheKiB);")
        if let mmap = tuning.mmapMiB { exec("PRAGMA mmap_size = \(mmap << 20)") }
        if let checkpointer {
            self.checkpointer = checkpointer
            hookContext = checkpointer.attach(writer: db)
        }
    }

    func close() {
        for s in statements.values { sqlite3_finalize(s) }
        statements = [:]
        if let hookContext { WALCheckpointer.detach(writer: db, context: hookContext) }
        hookContext = nil
        sqlite3_close_v2(db)
        checkpointer?.stopAndWait()
    }

    func exec(_ sql: String) {
        var err: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(db, sql, nil, nil, &err) != SQLITE_OK {
            fatalError("sqlite: \(err.map { String(cString: $0) } ?? "?") in \(sql.prefix(60))")
        }
    }

    func prepare(_ sql: String) -> OpaquePointer {
        if let s = statements[sql] { return s }
        var s: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &s, nil) == SQLITE_OK, let s else {
            fatalError("prepare: \(String(cString: sqlite3_errmsg(db))) in \(sql.prefix(60))")
        }
        statements[sql] = s
        return s
    }

    @inline(__always) func bind(_ s: OpaquePointer, _ i: Int32, _ v: String) {
        sqlite3_bind_text(s, i, v, Int32(v.utf8.count), usher_sqlite_transient())
    }
    @inline(__always) func bind(_ s: OpaquePointer, _ i: Int32, bytes: UnsafeBufferPointer<UInt8>) {
        bytes.withMemoryRebound(to: CChar.self) {
            _ = sqlite3_bind_text(s, i, $0.baseAddress, Int32($0.count), usher_sqlite_transient())
        }
    }
    @inline(__always) func bind(_ s: OpaquePointer, _ i: Int32, _ v: Int64) { sqlite3_bind_int64(s, i, v) }
    @inline(__always) func bind(_ s: OpaquePointer, _ i: Int32, _ v: Double) { sqlite3_bind_double(s, i, v) }
    @inline(__always) func null(_ s: OpaquePointer, _ i: Int32) { sqlite3_bind_null(s, i) }

    /// Steps once: true for a row.
    @inline(__always) func step(_ s: OpaquePointer) -> Bool {
        let rc = sqlite3_step(s)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        fatalError("step: \(String(cString: sqlite3_errmsg(db)))")
    }
    @inline(__always) func reset(_ s: OpaquePointer) { sqlite3_reset(s) }
    @inline(__always) func int64(_ s: OpaquePointer, _ i: Int32) -> Int64 { sqlite3_column_int64(s, i) }
    @inline(__always) func text(_ s: OpaquePointer, _ i: Int32) -> String {
        guard let p = sqlite3_column_text(s, i) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(s, i))), as: UTF8.self)
    }
    @inline(__always) func bytes(_ s: OpaquePointer, _ i: Int32) -> Int { Int(sqlite3_column_bytes(s, i)) }

    /// Pages this connection has written (to the WAL) since it was opened.
    var pagesWritten: Int {
        var current: Int32 = 0, highwater: Int32 = 0
        sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &current, &highwater, 0)
        return Int(current)
    }

    /// Runs one statement of SQL with no parameters.
    func run(_ sql: String) {
        let s = prepare(sql)
        _ = step(s)
        reset(s)
    }
}

/// Settings the benchmark varies (`--cache-kib`, `--mmap-mib`, `--page-size`), the same for the
/// bare loop and the store.
struct Tuning: Sendable {
    var cacheKiB = SQLiteStore.Options().cacheKiB
    var mmapMiB: Int?
    /// For a new file: `Workload.prepare` creates it with this page size.
    var pageSize: Int?
}
