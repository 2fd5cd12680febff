import Foundation
import UsherSQLite

/// `--micro`: what each statement of a commit costs alone, repeated inside one transaction —
/// to see where a commit's time goes on this machine's SQLite.
enum Micro {
    static func run(path: String, n: Int) async throws {
        let work = Workload(messages: n, conversations: 1000)
        let json = Workload.sampleStateJSON
        try await work.prepare(path: path)
        let db = RawDB(path: path)
        defer { db.close() }
        func time(_ name: String, _ sql: String, _ bind: (OpaquePointer, Int) -> Void) {
            let s = db.prepare(sql)
            db.exec("BEGIN IMMEDIATE")
            let t = ContinuousClock.now
            for i in 0..<n {
                bind(s, i)
                while db.step(s) {}
                db.reset(s)
            }
            let d = ContinuousClock.now - t
            let tc = ContinuousClock.now
            db.exec("COMMIT")
            print("  " + name.padding(toLength: 28, withPad: " ", startingAt: 0)
                  + String(format: "%6.2f µs/row   COMMIT of all %6.1f ms", d / .microseconds(1) / Double(n), (ContinuousClock.now - tc).ms))
        }
        print("one statement of the commit, \(n) times in one transaction:")
        time("stateMeta (miss)", StoreSQL.stateMeta) { s, i in db.bind(s, 1, "bench"); db.bind(s, 2, "c-\(i % 1000)") }
        time("earlierUndone", StoreSQL.earlierUndone) { s, i in
            db.bind(s, 1, "c-\(i % 1000)"); db.bind(s, 2, Int64(0)); db.bind(s, 3, Int64(i + 1))
        }
        time("agentAfter", StoreSQL.agentAfter) { s, i in db.bind(s, 1, "c-\(i % 1000)"); db.bind(s, 2, Int64(i + 1)) }
        time("updateConversationOnCommit", StoreSQL.updateConversationOnCommit) { s, i in
            db.bind(s, 1, "c-\(i % 1000)"); db.bind(s, 2, "u"); db.bind(s, 5, "bot"); db.bind(s, 6, Int64(0))
            db.bind(s, 7, Int64(i)); db.bind(s, 8, "[]"); db.bind(s, 9, "{}"); db.bind(s, 10, 1.0)
        }
        time("insertOutgoing", StoreSQL.insertOutgoing) { s, i in
            db.bind(s, 1, "bench:m-\(i):0"); db.bind(s, 2, "c-\(i % 1000)"); db.bind(s, 3, "bot")
            db.bind(s, 4, "bot:bench"); db.bind(s, 5, "Bench"); db.bind(s, 6, "Thanks for reaching out—we're here to help.")
            db.bind(s, 7, 1.0); db.bind(s, 8, "opening")
        }
        time("insertState (first time)", StoreSQL.insertState.replacingOccurrences(of: "INSERT", with: "INSERT OR IGNORE")) { s, i in
            db.bind(s, 1, "bench"); db.bind(s, 2, "c-\(i % 1000)"); db.bind(s, 3, Int64(i)); db.bind(s, 4, "bot")
            db.bind(s, 5, Int64(i)); json.withUnsafeBufferPointer { db.bind(s, 6, bytes: $0) }
            db.bind(s, 7, "v1"); db.bind(s, 8, 1.0)
        }
        time("updateState", StoreSQL.updateState) { s, i in
            db.bind(s, 1, "bench"); db.bind(s, 2, "c-\(i % 1000)"); db.bind(s, 3, Int64(i)); db.bind(s, 4, "bot")
            db.bind(s, 5, Int64(i)); json.withUnsafeBufferPointer { db.bind(s, 6, bytes: $0) }
            db.bind(s, 7, "v1"); db.bind(s, 8, 1.0)
        }
    }
}
