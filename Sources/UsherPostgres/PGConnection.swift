import CLibPQ
import Foundation
import Synchronization
package import UsherStore

/// Where libpq's notices go: a server's WARNING, or the FATAL that ends an idle connection when
/// the server shuts down. libpq's own default writes them raw on stderr, between the worker's
/// log lines (and breaking `--log-format json`); `usher run` logs them as `pg-notice`, and
/// without a route they are dropped.
package enum PGNotices {
    private static let handler = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Sends every later notice of every connection to `handler` (nil: drops them).
    package static func route(_ handler: (@Sendable (String) -> Void)?) {
        self.handler.withLock { $0 = handler }
    }

    static func report(_ message: UnsafePointer<CChar>?) {
        guard let message, let handler = handler.withLock({ $0 }) else { return }
        handler(String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

/// One libpq connection. Not thread-safe: `PostgresStore` uses each connection from one thread
/// at a time. Parameters travel as text with types left to the server to infer from the
/// statement, so one statement text serves columns of any type (a helpdesk's integer ids too).
package final class PGConnection {
    private let conn: OpaquePointer
    /// Statements prepared on this connection, by their text.
    private var prepared: [String: String] = [:]

    /// Connects with a `postgres://` / `postgresql://` URL or a `key=value` string; libpq reads
    /// `PGPASSWORD`, `PGSSLMODE`, `~/.pgpass` and the rest of its environment itself.
    package init(_ conninfo: String) throws(StoreError) {
        guard let c = PQconnectdb(conninfo) else {
            throw StoreError("pg-connect", "out of memory while connecting", transient: true)
        }
        guard PQstatus(c) == CONNECTION_OK else {
            let why = Self.message(PQerrorMessage(c))
            PQfinish(c)
            throw StoreError("pg-connect", "cannot connect to PostgreSQL: \(why)", transient: true,
                             unavailable: PGError.isUnreachable(connectError: why))
        }
        conn = c
        PQsetNoticeProcessor(c, { _, message in PGNotices.report(message) }, nil)
        // Replies must not wait for the next packet; times are ours, not the session's zone.
        _ = try? execute("SET TIME ZONE 'UTC'; SET client_min_messages TO warning")
    }

    deinit { PQfinish(conn) }

    /// Set when a pipeline ended in a state this class does not know how to resume from.
    private var broken = false

    /// The connection's socket (-1: none).
    package var socket: Int32 { PQsocket(conn) }

    /// The settings the connection was made with, by keyword (libpq's `PQconninfo`).
    package var settings: [String: String] {
        guard let options = PQconninfo(conn) else { return [:] }
        defer { PQconninfoFree(options) }
        return PGConnInfo.values(options)
    }

    /// Whether the connection is still usable.
    var isOK: Bool { !broken && PQstatus(conn) == CONNECTION_OK }

    /// The name of `sql` prepared on this connection (prepared now when it is new).
    private func preparedName(_ sql: String) throws(StoreError) -> String {
        if let known = prepared[sql] { return known }
        let name = "usher_\(prepared.count)"
        let r = PQprepare(conn, name, sql, 0, nil)
        try check(r, sql)
        PQclear(r)
        prepared[sql] = name
        return name
    }

    /// Runs `sql` with `params` (NULL for nil). Prepared once per connection when `prepare` is
    /// set (the hot path), otherwise sent as is.
    @discardableResult
    package func execute(_ sql: String, _ params: [String?] = [], prepare: Bool = false) throws(StoreError) -> PGResult {
        let result: OpaquePointer?
        if prepare {
            let name = try preparedName(sql)
            result = Self.withCStrings(params) { values in
                PQexecPrepared(conn, name, Int32(params.count), values, nil, nil, 0)
            }
        } else if params.isEmpty {
            result = PQexec(conn, sql)
        } else {
            result = Self.withCStrings(params) { values in
                PQexecParams(conn, sql, Int32(params.count), nil, values, nil, nil, 0)
            }
        }
        try check(result, sql)
        return PGResult(result!)
    }

    /// Runs prepared statements in one round trip (libpq's pipeline mode) and returns their
    /// results in order. The server runs them one after the other; after one fails it skips the
    /// rest, and the first error is thrown once the pipeline has ended. Inside a transaction
    /// that leaves it aborted: the caller rolls back.
    @discardableResult
    func pipeline(_ statements: [(sql: String, params: [String?])]) throws(StoreError) -> [PGResult] {
        try pipeline(statements, run: true)
    }

    /// `pipeline` without blocking the thread while the server works: the caller's task waits
    /// for the reply on `thread` — its own, which meanwhile runs other tasks and watches other
    /// sockets (`ThreadExecutor.ready`). The statements go out as the blocking call sends them.
    @discardableResult
    package func pipeline(_ statements: [(sql: String, params: [String?])], on thread: ThreadExecutor) async throws(StoreError) -> [PGResult] {
        var p = try send(statements)
        while try !collect(&p) {
            let fd = socket
            if fd < 0 { broken = true; throw lost("the connection has no socket") }
            await thread.ready(fd)
        }
        return try p.end()
    }

    /// A pipeline sent, and what has come back of it.
    private struct Pipeline {
        /// Statements prepared at its start (new to the connection), each with its name: their
        /// results are not the caller's.
        var preparing: [(name: String, sql: String)]
        /// Every statement whose results are awaited, in order: the preparations, then the
        /// caller's statements.
        var statements: [String]
        var results: [PGResult] = []
        var failure: StoreError?
        /// Statements whose results have come.
        var done = 0
        /// Each statement's results end with a null: the last result was a statement's.
        var endOfStatement = false

        func end() throws(StoreError) -> [PGResult] {
            if let failure { throw failure }
            return results
        }
    }

    /// Prepares every statement of `sqls` the connection has not prepared yet, in one round trip.
    func prepare(all sqls: [String]) throws(StoreError) {
        guard sqls.contains(where: { prepared[$0] == nil }) else { return }
        _ = try pipeline(sqls.map { ($0, []) }, run: false)
    }

    /// `pipeline`, blocking the thread; `run: false` only prepares the statements.
    private func pipeline(_ statements: [(sql: String, params: [String?])], run: Bool) throws(StoreError) -> [PGResult] {
        var p = try send(statements, run: run)
        while try !collect(&p) {
            if usher_pq_wait_readable(conn, -1) < 0 { broken = true; throw lost("the connection's socket failed") }
        }
        return try p.end()
    }

    /// Enters pipeline mode and sends `statements` and a sync point, preparing those new to the
    /// connection at the pipeline's start — in the same round trip — unless `run` is false, when
    /// it only prepares them.
    private func send(_ statements: [(sql: String, params: [String?])], run: Bool = true) throws(StoreError) -> Pipeline {
        var names: [String] = []
        var preparing: [(name: String, sql: String)] = []
        for s in statements {
            if let known = prepared[s.sql] ?? preparing.first(where: { $0.sql == s.sql })?.name {
                names.append(known)
            } else {
                let name = "usher_\(prepared.count + preparing.count)"
                preparing.append((name, s.sql))
                names.append(name)
            }
        }
        guard PQenterPipelineMode(conn) == 1 else { throw lost(Self.message(PQerrorMessage(conn))) }
        for (name, sql) in preparing where PQsendPrepare(conn, name, sql, 0, nil) != 1 {
            broken = true
            throw lost(Self.message(PQerrorMessage(conn)))
        }
        let statements = run ? statements : []
        for (i, s) in statements.enumerated() {
            let sent = Self.withCStrings(s.params) { values in
                PQsendQueryPrepared(conn, names[i], Int32(s.params.count), values, nil, nil, 0)
            }
            if sent != 1 { broken = true; throw lost(Self.message(PQerrorMessage(conn))) }
        }
        guard PQpipelineSync(conn) == 1 else { broken = true; throw lost(Self.message(PQerrorMessage(conn))) }
        return Pipeline(preparing: preparing, statements: preparing.map(\.sql) + statements.map(\.sql))
    }

    /// Takes in what the server has sent of the pipeline's results, without waiting for more;
    /// true once its sync point has come (then back to one statement at a time).
    private func collect(_ p: inout Pipeline) throws(StoreError) -> Bool {
        while true {
            if try take(&p) { return true }
            // Waiting for the socket next: TLS may hold bytes it decrypted already, which the
            // socket will not announce (a reply larger than libpq's buffer).
            if usher_pq_tls_pending(conn) <= 0 { return false }
        }
    }

    /// `collect`'s one look: reads what the socket has, takes the results that are whole.
    private func take(_ p: inout Pipeline) throws(StoreError) -> Bool {
        if PQconsumeInput(conn) == 0 { broken = true; throw lost(Self.message(PQerrorMessage(conn))) }
        while PQisBusy(conn) == 0 {
            let next = PQgetResult(conn)
            if p.endOfStatement {
                if let extra = next { PQclear(extra) } else { p.endOfStatement = false }
                continue
            }
            guard let r = next else {
                broken = true
                throw lost(p.done < p.statements.count ? Self.message(PQerrorMessage(conn)) : "the pipeline ended without its sync point")
            }
            if p.done < p.statements.count {
                if PQresultStatus(r) == PGRES_PIPELINE_ABORTED {
                    PQclear(r)
                } else if p.done < p.preparing.count {
                    // A preparation: the name is the connection's from now on.
                    do {
                        try check(r, p.statements[p.done])
                        PQclear(r)
                        prepared[p.preparing[p.done].sql] = p.preparing[p.done].name
                    } catch { p.failure = p.failure ?? error }
                } else {
                    do { try check(r, p.statements[p.done]); p.results.append(PGResult(r)) } catch { p.failure = p.failure ?? error }
                }
                p.done += 1
                p.endOfStatement = true
                continue
            }
            if PQresultStatus(r) != PGRES_PIPELINE_SYNC {
                // An error at the end of the implicit transaction, after the last statement (a
                // deferred constraint, a serialization failure): the server's own error, then a
                // null, then the sync point.
                var failure: StoreError?
                do throws(StoreError) { try check(r, "COMMIT") } catch { failure = error }
                guard let failure else {
                    PQclear(r)
                    broken = true
                    throw lost("the pipeline did not end cleanly")
                }
                p.failure = p.failure ?? failure
                p.endOfStatement = true
                continue
            }
            // The sync point.
            PQclear(r)
            guard PQexitPipelineMode(conn) == 1 else { broken = true; throw lost("the pipeline did not end cleanly") }
            return true
        }
        return false
    }

    /// Has the server plan `sql` without running it (`PQprepare` of an unnamed statement): nil
    /// when it is valid, else the server's primary message and where in `sql` the error is (the
    /// 1-based character position, when the server gives one). For checking text from a
    /// mapping file: the connection stays usable either way.
    func planProblem(_ sql: String) throws(StoreError) -> (message: String, position: Int?)? {
        guard let result = PQprepare(conn, "", sql, 0, nil) else {
            throw StoreError("pg-connection", Self.message(PQerrorMessage(conn)), transient: true)
        }
        defer { PQclear(result) }
        if PQresultStatus(result) == PGRES_COMMAND_OK { return nil }
        func field(_ code: Character) -> String? { PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) } }
        let state = field("C") ?? ""
        guard state.hasPrefix("42") || state.hasPrefix("22") else {
            throw PGError.storeError(sqlState: state, message: Self.message(PQresultErrorMessage(result)), connectionOK: isOK)
        }
        return (field("M") ?? "", field("P").flatMap { Int($0) })
    }

    /// Runs several statements (no parameters) in one round trip: migrations, BEGIN/COMMIT.
    package func script(_ sql: String) throws(StoreError) {
        let r = PQexec(conn, sql)
        try check(r, sql)
        PQclear(r)
    }

    /// Reads what the server sent and returns the notifications since the last call (channel and
    /// payload); `wait` blocks up to that many milliseconds for the socket first.
    package func notifications(wait milliseconds: Int32) throws(StoreError) -> [(channel: String, payload: String)] {
        if milliseconds > 0 {
            let r = usher_pq_wait_readable(conn, milliseconds)
            if r < 0 { throw lost("the connection's socket failed") }
        }
        var out: [(channel: String, payload: String)] = []
        repeat {
            if PQconsumeInput(conn) == 0 { throw lost(Self.message(PQerrorMessage(conn))) }
            while let n = PQnotifies(conn) {
                out.append((String(cString: n.pointee.relname), String(cString: n.pointee.extra)))
                PQfreemem(n)
            }
        } while usher_pq_tls_pending(conn) > 0   // bytes TLS decrypted already: no socket wake-up for them
        return out
    }

    private func lost(_ why: String) -> StoreError {
        StoreError("pg-connection", "lost the connection to PostgreSQL: \(why)", transient: true)
    }

    private func check(_ result: OpaquePointer?, _ sql: String) throws(StoreError) {
        guard let result else {
            throw StoreError("pg-connection", Self.message(PQerrorMessage(conn)), transient: true)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            let text = Self.message(PQresultErrorMessage(result))
            PQclear(result)
            throw PGError.storeError(sqlState: state, message: text, connectionOK: isOK)
        }
    }

    static func message(_ p: UnsafePointer<CChar>?) -> String {
        guard let p else { return "unknown error" }
        return String(cString: p).trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "\n", with: " ")
    }

    /// Passes Swift strings as C strings for the duration of `body`, each lent in place (a native
    /// string keeps its UTF-8 with a NUL after it), not copied: a batch's parameters are every
    /// reply and state of the batch. A NUL inside a string would silently cut it short in libpq,
    /// so callers clean text first (`PGText.clean`).
    private static func withCStrings<T>(_ values: [String?], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        var pointers: [UnsafePointer<CChar>?] = []
        pointers.reserveCapacity(values.count)
        func lend(from i: Int) -> T {
            guard i < values.count else { return body(pointers) }
            guard let v = values[i] else {
                pointers.append(nil)
                return lend(from: i + 1)
            }
            return v.withCString { p in
                pointers.append(p)
                return lend(from: i + 1)
            }
        }
        return lend(from: 0)
    }
}

/// A query's rows, read as text (the text protocol).
package final class PGResult {
    private let result: OpaquePointer
    package let rows: Int
    let columns: Int

    init(_ result: OpaquePointer) {
        self.result = result
        rows = Int(PQntuples(result))
        columns = Int(PQnfields(result))
    }

    deinit { PQclear(result) }

    /// Rows changed by an INSERT/UPDATE/DELETE.
    var affected: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(result, Int32(row), Int32(column)) != 0 }

    /// The value as text; invalid UTF-8 (a `SQL_ASCII` database) is repaired with U+FFFD.
    func text(_ row: Int, _ column: Int) -> String? {
        if isNull(row, column) { return nil }
        let p = PQgetvalue(result, Int32(row), Int32(column))!
        let n = Int(PQgetlength(result, Int32(row), Int32(column)))
        return p.withMemoryRebound(to: UInt8.self, capacity: n) {
            String(decoding: UnsafeBufferPointer(start: $0, count: n), as: UTF8.self)
        }
    }

    package func string(_ row: Int, _ column: Int) -> String { text(row, column) ?? "" }

    /// Parsed in place (no String on the way): a batch reads several numbers a row.
    package func int64(_ row: Int, _ column: Int) -> Int64 {
        if isNull(row, column) { return 0 }
        let n = Int(PQgetlength(result, Int32(row), Int32(column)))
        if n > 18 { return text(row, column).flatMap { Int64($0) } ?? 0 }   // near the limits: the careful way
        return PQgetvalue(result, Int32(row), Int32(column))!.withMemoryRebound(to: UInt8.self, capacity: n) { p in
            var i = 0, negative = false, value: Int64 = 0
            if n > 0, p[0] == UInt8(ascii: "-") { negative = true; i = 1 }
            while i < n, p[i] >= UInt8(ascii: "0"), p[i] <= UInt8(ascii: "9") {
                value = value &* 10 &+ Int64(p[i] &- UInt8(ascii: "0"))
                i += 1
            }
            return i == n && n > (negative ? 1 : 0) ? (negative ? -value : value) : (text(row, column).flatMap { Int64($0) } ?? 0)
        }
    }

    func int(_ row: Int, _ column: Int) -> Int { Int(int64(row, column)) }

    /// `strtod` on the value itself (NUL-terminated by libpq).
    func double(_ row: Int, _ column: Int) -> Double {
        if isNull(row, column) { return 0 }
        return strtod(PQgetvalue(result, Int32(row), Int32(column))!, nil)
    }

    func bool(_ row: Int, _ column: Int) -> Bool { text(row, column) == "t" }
}

/// How a server error becomes a `StoreError`: connection trouble, serialization failures,
/// deadlocks and a server shutting down are worth retrying; the rest are not.
package enum PGError {
    static func storeError(sqlState: String, message: String, connectionOK: Bool) -> StoreError {
        let transientClasses: Set<Substring> = ["08", "40", "53", "57", "58"]
        // No SQLSTATE: libpq's own error (the server went away mid-call), not the server's.
        let lost = !connectionOK || sqlState.isEmpty
        let transient = lost || transientClasses.contains(sqlState.prefix(2))
        let code = lost ? "pg-connection" : "pg-\(sqlState)"
        return StoreError(code, message, transient: transient)
    }

    /// Whether `error` says the data itself is unacceptable (class 22: bad encoding, a NUL,
    /// a value out of range) — retrying the same message cannot help.
    static func isDataException(_ error: StoreError) -> Bool { error.code.hasPrefix("pg-22") }

    /// The primary message of a server error (`message` of a `StoreError`, its lines joined):
    /// `invalid input syntax for type integer: "x"` of `ERROR:  invalid input syntax … LINE 1: …`,
    /// without the severity, the statement's line and the detail, hint and context.
    static func primary(_ message: String) -> String {
        var s = Substring(message)
        for severity in ["ERROR:  ", "FATAL:  "] where s.hasPrefix(severity) { s = s.dropFirst(severity.count) }
        for field in [" DETAIL:  ", " HINT:  ", " CONTEXT:  ", " LINE "] {
            if let r = s.range(of: field) { s = s[..<r.lowerBound] }
        }
        return String(s)
    }

    /// A unique key was taken by a concurrent transaction.
    static func isUniqueViolation(_ error: StoreError) -> Bool { error.code == "pg-23505" }

    /// Two transactions waited for each other's rows, and the server ended this one.
    static func isDeadlock(_ error: StoreError) -> Bool { error.code == "pg-40P01" }

    /// Whether a failed connect's message says the server is not there yet — refused, its
    /// socket missing, starting up or shutting down, timed out, its host name not found yet —
    /// rather than a reason waiting does not mend (a password, a database, TLS). libpq says
    /// which only in its message; `StoreError.isUnavailable` carries the answer out.
    static func isUnreachable(connectError why: String) -> Bool {
        let m = why.lowercased()
        return [
            "connection refused", "no such file or directory", "timeout expired", "the database system is starting up",
            "the database system is shutting down", "the database system is not yet accepting connections",
            "could not translate host name", "network is unreachable", "no route to host",
            "server closed the connection unexpectedly",
        ].contains { m.contains($0) }
    }
}

/// Text values on their way to PostgreSQL.
enum PGText {
    /// PostgreSQL's text cannot hold U+0000: it is replaced by U+FFFD so that the message is
    /// still stored and decided (the rules never match on a NUL anyway).
    static func clean(_ s: String) -> String {
        s.utf8.contains(0) ? s.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : s
    }

    static func clean(_ s: String?) -> String? { s.map(clean) }

    /// A text array literal (`{"a","b"}`) for an `= ANY($n)` or `unnest($n::text[])` parameter.
    static func array(_ values: some Sequence<String>) -> String {
        array(optional: values.lazy.map { Optional($0) })
    }

    /// An array literal of optional texts (NULL elements unquoted). Built as UTF-8 bytes: a
    /// batch's literals hold every reply and state of the batch.
    static func array(optional values: some Sequence<String?>) -> String {
        var out = ArrayLiteral()
        for v in values { out.append(v) }
        return out.finish()
    }

    /// The array literal of one field of each element of `elements`, read in place: a lazy map
    /// over an array of commits or replies hands out each element whole — a copy, retaining every
    /// string in it — to read one of them (an eighth of the worker's CPU at throughput).
    static func array<C: Collection>(_ elements: C, _ field: (C.Element) -> String?) -> String {
        var out = ArrayLiteral()
        for i in elements.indices { out.append(field(elements[i])) }
        return out.finish()
    }

    /// An array literal built element by element.
    struct ArrayLiteral {
        private var out: [UInt8] = [UInt8(ascii: "{")]
        private var first = true

        init() { out.reserveCapacity(256) }

        /// The literal, closed.
        consuming func finish() -> String {
            out.append(UInt8(ascii: "}"))
            return String(decoding: out, as: UTF8.self)
        }

        mutating func append(_ value: String?) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            guard var v = value else {
                out.append(contentsOf: "NULL".utf8)
                return
            }
            out.append(UInt8(ascii: "\""))
            v.withUTF8 { bytes in
                // Runs without a quote, backslash or NUL are copied whole.
                var from = 0
                for (i, b) in bytes.enumerated() where b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b == 0 {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[from..<i]))
                    if b == 0 {
                        out.append(contentsOf: [0xEF, 0xBF, 0xBD])   // U+FFFD, as `clean`
                    } else {
                        out.append(UInt8(ascii: "\\"))
                        out.append(b)
                    }
                    from = i + 1
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[from...]))
            }
            out.append(UInt8(ascii: "\""))
        }
    }

    static func array(_ values: some Sequence<Int64>) -> String {
        "{" + values.map(String.init).joined(separator: ",") + "}"
    }

    /// Times: a batch's are mostly one instant, formatted once.
    static func array(_ values: some Sequence<Double>) -> String {
        var last: (value: Double, text: String)?
        return "{" + values.map { v in
            if let last, last.value == v { return last.text }
            let text = String(v)
            last = (v, text)
            return text
        }.joined(separator: ",") + "}"
    }

    /// A string literal for SQL text: values from the mapping file inlined into statements.
    static func literal(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }

    /// A quoted identifier; `schema.table` quotes each part.
    static func identifier(_ name: String) -> String {
        name.split(separator: ".", omittingEmptySubsequences: false)
            .map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
            .joined(separator: ".")
    }
}
