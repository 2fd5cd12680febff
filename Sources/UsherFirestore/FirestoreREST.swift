import Foundation
import UsherGoogleAuth
import UsherHTTP
import UsherJSON
import UsherStore

/// Firestore's REST API v1, the calls this adapter makes: `runQuery`, `batchGet`, `commit`,
/// `batchWrite`. One `HTTPClient` (kept-alive connections) for all of them; requests and
/// answers are written and read with UsherJSON.
///
/// The emulator (`FIRESTORE_EMULATOR_HOST`) takes `Authorization: Bearer owner` and bypasses
/// security rules, as Google's SDKs do; production takes an OAuth access token from a service
/// account (`AccessTokenSource`).
final class FirestoreREST: Sendable {
    /// `http://127.0.0.1:8080/v1/` or `https://firestore.googleapis.com/v1/`.
    let base: String
    /// `projects/P/databases/D/documents`: every document name starts with it.
    let root: String
    let http: HTTPClient
    let auth: Auth
    /// Calls made, by method (`runQuery`, `commit`, ...): what the tests and the benchmark count.
    let calls = Locked<[String: Int]>([:])

    enum Auth: Sendable {
        /// The emulator's bypass.
        case emulator
        case serviceAccount(AccessTokenSource)
    }

    init(base: String, project: String, database: String, http: HTTPClient, auth: Auth) {
        self.base = base
        self.root = "projects/\(project)/databases/\(database)/documents"
        self.http = http
        self.auth = auth
    }

    /// The full name of the document at `path` (`conversations/u1`).
    func name(_ path: String) -> String { root + "/" + path }

    /// The path of a full name, relative to the database's documents.
    func path(_ name: String) -> String {
        name.hasPrefix(root + "/") ? String(name.dropFirst(root.count + 1)) : name
    }

    // MARK: Calls

    /// Documents by full name, in the order asked; nil for those that do not exist.
    func batchGet(_ names: [String]) async throws -> [FirestoreDocument?] {
        guard !names.isEmpty else { return [] }
        var w = JSONWriter(capacity: 64 + names.count * 96)
        w.raw("{\"documents\":")
        w.stringArray(names)
        w.byte(UInt8(ascii: "}"))
        let answer = try await post(root + ":batchGet", w.bytes)
        guard case let .array(items) = answer.kind else { throw FirestoreError.malformed("batchGet answered \(answer.typeName)") }
        var found: [String: FirestoreDocument] = [:]
        for item in items {
            if let doc = item["found"] { let d = try FirestoreDocument(doc); found[d.name] = d }
        }
        return names.map { found[$0] }
    }

    /// The documents a query returns, in its order.
    func runQuery(_ query: FirestoreQuery) async throws -> [FirestoreDocument] {
        var w = JSONWriter(capacity: 512)
        query.write(into: &w)
        let parent = query.parent.map(name) ?? root
        let answer = try await post(parent + ":runQuery", w.bytes)
        guard case let .array(items) = answer.kind else { throw FirestoreError.malformed("runQuery answered \(answer.typeName)") }
        var docs: [FirestoreDocument] = []
        docs.reserveCapacity(items.count)
        for item in items {
            if let doc = item["document"] { docs.append(try FirestoreDocument(doc)) }
        }
        return docs
    }

    /// Writes all of `writes` atomically, or none; the update times of the written documents.
    @discardableResult
    func commit(_ writes: [FirestoreWrite]) async throws -> [String] {
        let answer = try await post(root + ":commit", Self.body(writes))
        guard case let .array(results)? = answer["writeResults"]?.kind else { return [] }
        return results.map { if case let .string(t)? = $0["updateTime"]?.kind { t } else { "" } }
    }

    /// Writes each of `writes` on its own (not atomically): whether each was applied.
    func batchWrite(_ writes: [FirestoreWrite]) async throws -> [Bool] {
        guard !writes.isEmpty else { return [] }
        let answer = try await post(root + ":batchWrite", Self.body(writes))
        guard case let .array(status)? = answer["status"]?.kind else {
            throw FirestoreError.malformed("batchWrite answered without a status per write")
        }
        return status.map { s in
            if case let .number(code)? = s["code"]?.kind { return code == "0" }
            return true   // an empty status is OK (code 0 is left out)
        }
    }

    static func body(_ writes: [FirestoreWrite]) -> [UInt8] {
        var w = JSONWriter(capacity: 256 * writes.count)
        w.raw("{\"writes\":[")
        for (i, write) in writes.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            write.write(into: &w)
        }
        w.raw("]}")
        return w.bytes
    }

    /// POSTs `body` to `base + path` and reads the JSON answer; a Firestore error (any status
    /// but 200) is thrown as a `FirestoreError.status`.
    private func post(_ path: String, _ body: [UInt8]) async throws -> JSONValue {
        let method = path.split(separator: ":").last.map(String.init) ?? path
        calls.withLock { $0[method, default: 0] += 1 }
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        switch auth {
        case .emulator: headers.append(("Authorization", "Bearer owner"))
        case let .serviceAccount(source): headers.append(("Authorization", "Bearer " + (try await source.token())))
        }
        let response: HTTPResponse
        do {
            response = try await http.send(HTTPRequest(method: "POST", url: base + path, headers: headers, body: body))
        } catch {
            throw StoreError("firestore-unreachable", error.message,
                             transient: error.kind == .timedOut, unavailable: error.kind == .cannotConnect)
        }
        let json: JSONValue
        do {
            json = try response.body.withUnsafeBufferPointer { try JSONReader.parse($0) }
        } catch {
            throw FirestoreError.status(response.status, "", "answered \(response.status) with a body that is not JSON: "
                                        + String(decoding: response.body.prefix(200), as: UTF8.self))
        }
        guard response.status == 200 else {
            if response.status == 401, case let .serviceAccount(source) = auth { await source.invalidate() }
            throw FirestoreError(status: response.status, json)
        }
        return json
    }

}

/// What went wrong talking to Firestore.
enum FirestoreError: Error, Sendable, CustomStringConvertible {
    /// An error answer: HTTP status, gRPC status name (`ALREADY_EXISTS`, `FAILED_PRECONDITION`,
    /// `ABORTED`, …), message.
    case status(Int, String, String)
    /// An answer this adapter cannot read.
    case malformed(String)

    init(status: Int, _ json: JSONValue) {
        let error = json["error"] ?? (json.arrayFirst?["error"])
        var name = "", message = ""
        if case let .string(s)? = error?["status"]?.kind { name = s }
        if case let .string(s)? = error?["message"]?.kind { message = s }
        self = .status(status, name, message)
    }

    /// The gRPC status name of an error answer.
    var code: String? { if case let .status(_, name, _) = self { name } else { nil } }

    /// Writes that failed their preconditions: a document written since it was read
    /// (`FAILED_PRECONDITION`), or one created meanwhile (`ALREADY_EXISTS`).
    var isPrecondition: Bool { code == "FAILED_PRECONDITION" || code == "ALREADY_EXISTS" }

    /// Trying again later may succeed: `ABORTED` (contention), `UNAVAILABLE`,
    /// `DEADLINE_EXCEEDED`, `RESOURCE_EXHAUSTED`, and any 5xx.
    var isTransient: Bool {
        guard case let .status(http, name, _) = self else { return false }
        return http >= 500 || ["ABORTED", "UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED", "INTERNAL"].contains(name)
    }

    var description: String {
        switch self {
        case let .status(http, name, message): "Firestore answered \(http) \(name): \(message)"
        case let .malformed(what): "unexpected answer from Firestore: \(what)"
        }
    }

    /// As the worker sees it: transient errors are retried with backoff.
    var storeError: StoreError {
        StoreError(code ?? "firestore", description, transient: isTransient)
    }
}

private extension JSONValue {
    var arrayFirst: JSONValue? { if case let .array(items) = kind { items.first } else { nil } }
}

/// One write of a `commit` or `batchWrite`.
struct FirestoreWrite: Sendable {
    enum Operation: Sendable {
        /// Sets the fields (all of them, or those in `mask`), creating the document if needed.
        case update(name: String, fields: [String: FirestoreValue], mask: [String]?)
        case delete(name: String)
    }
    enum Precondition: Sendable {
        case exists(Bool)
        case updateTime(String)
    }

    var operation: Operation
    var precondition: Precondition?
    /// Fields incremented by the server after the update (`messageCount`).
    var increments: [(field: String, by: Int64)] = []

    static func create(_ name: String, _ fields: [String: FirestoreValue]) -> FirestoreWrite {
        FirestoreWrite(operation: .update(name: name, fields: fields, mask: nil), precondition: .exists(false))
    }

    /// Sets `fields` of the document read at `updateTime` (nil: read as absent).
    static func update(_ name: String, _ fields: [String: FirestoreValue], mask: [String]? = nil,
                       readAt updateTime: String?) -> FirestoreWrite {
        FirestoreWrite(operation: .update(name: name, fields: fields, mask: mask),
                       precondition: updateTime.map { .updateTime($0) } ?? .exists(false))
    }

    func write(into w: inout JSONWriter) {
        w.byte(UInt8(ascii: "{"))
        switch operation {
        case let .update(name, fields, mask):
            w.raw("\"update\":{\"name\":"); w.string(name)
            w.raw(",\"fields\":"); FirestoreValue.write(fields: fields, into: &w)
            w.byte(UInt8(ascii: "}"))
            if let mask {
                w.raw(",\"updateMask\":{\"fieldPaths\":"); w.stringArray(mask); w.byte(UInt8(ascii: "}"))
            }
        case let .delete(name):
            w.raw("\"delete\":"); w.string(name)
        }
        if !increments.isEmpty {
            w.raw(",\"updateTransforms\":[")
            for (i, t) in increments.enumerated() {
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                w.raw("{\"fieldPath\":"); w.string(t.field)
                w.raw(",\"increment\":"); FirestoreValue.integer(t.by).write(into: &w)
                w.byte(UInt8(ascii: "}"))
            }
            w.byte(UInt8(ascii: "]"))
        }
        switch precondition {
        case let .exists(e)?: w.raw(",\"currentDocument\":{\"exists\":"); w.bool(e); w.byte(UInt8(ascii: "}"))
        case let .updateTime(t)?: w.raw(",\"currentDocument\":{\"updateTime\":"); w.string(t); w.byte(UInt8(ascii: "}"))
        case nil: break
        }
        w.byte(UInt8(ascii: "}"))
    }
}

/// A structured query: one collection (or every collection of that id, `allDescendants`),
/// equality and range filters, an order, a cursor and a limit.
struct FirestoreQuery: Sendable {
    /// The document whose sub-collection is read (a path, `conversations/u1`); nil: the root.
    var parent: String?
    var collection: String
    var allDescendants = false
    var filters: [(field: String, op: Op, value: FirestoreValue)] = []
    /// Ascending (descending with `descending`); `__name__` last (a total order).
    var orderBy: [String] = []
    var descending = false
    /// Start after these values of `orderBy` (a cursor).
    var startAfter: [FirestoreValue]? {
        get { startAt.flatMap { $0.1 ? nil : $0.0 } }
        set { startAt = newValue.map { ($0, false) } }
    }
    /// A cursor: values of `orderBy` (a prefix of them), and whether the query starts before
    /// (at) the documents with these values or after them.
    var startAt: ([FirestoreValue], Bool)?
    var limit: Int?

    enum Op: String, Sendable {
        case equal = "EQUAL", greaterOrEqual = "GREATER_THAN_OR_EQUAL", lessOrEqual = "LESS_THAN_OR_EQUAL",
             greater = "GREATER_THAN", less = "LESS_THAN"
    }

    func write(into w: inout JSONWriter) {
        w.raw("{\"structuredQuery\":{\"from\":[{\"collectionId\":"); w.string(collection)
        if allDescendants { w.raw(",\"allDescendants\":true") }
        w.raw("}]")
        if !filters.isEmpty {
            func filter(_ f: (field: String, op: Op, value: FirestoreValue)) {
                w.raw("{\"fieldFilter\":{\"field\":{\"fieldPath\":"); w.string(f.field)
                w.raw("},\"op\":\""); w.bytes.append(contentsOf: f.op.rawValue.utf8); w.raw("\",\"value\":")
                f.value.write(into: &w)
                w.raw("}}")
            }
            w.raw(",\"where\":")
            if filters.count == 1 {
                filter(filters[0])
            } else {
                w.raw("{\"compositeFilter\":{\"op\":\"AND\",\"filters\":[")
                for (i, f) in filters.enumerated() {
                    if i > 0 { w.byte(UInt8(ascii: ",")) }
                    filter(f)
                }
                w.raw("]}}")
            }
        }
        if !orderBy.isEmpty {
            w.raw(",\"orderBy\":[")
            for (i, field) in orderBy.enumerated() {
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                w.raw("{\"field\":{\"fieldPath\":"); w.string(field); w.raw(descending ? "},\"direction\":\"DESCENDING\"}" : "},\"direction\":\"ASCENDING\"}")
            }
            w.byte(UInt8(ascii: "]"))
        }
        if let (values, before) = startAt {
            w.raw(",\"startAt\":{\"values\":[")
            for (i, v) in values.enumerated() {
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                v.write(into: &w)
            }
            w.raw("],\"before\":"); w.bool(before); w.byte(UInt8(ascii: "}"))
        }
        if let limit { w.raw(",\"limit\":"); w.int(limit) }
        w.raw("}}")
    }
}
