import Foundation
import Synchronization
import Testing
import UsherEngine
import UsherRuntime
import UsherStore
import UsherTestSupport

@Suite("Store health")
struct StoreHealthTests {
    let busy = StoreHealth.Failure(bot: "b", operation: "commit", code: "busy", message: "locked")
    let full = StoreHealth.Failure(bot: "b", operation: "commit", code: "sqlite-full", message: "disk full")

    @Test func aFailureIsSaidOncePerCodeNotPerRetry() {
        var h = StoreHealth()
        let a = h.begin(), b = h.begin()
        #expect(h.failed(a, busy, now: .seconds(1)) == .failing(busy))
        #expect(h.failed(a, busy, now: .seconds(2)) == nil, "a retry failing the same way says nothing")
        #expect(h.failed(b, busy, now: .seconds(2)) == nil, "nor another call failing the same way")
        #expect(h.failed(b, full, now: .seconds(3)) == .failing(full), "a new code is said")
        #expect(h.failed(a, busy, now: .seconds(4)) == nil, "codes alternating between calls are said once each")
        #expect(h.status == .failing(latest: busy, since: .seconds(1)))
        #expect(h.ended(a, succeeded: true, now: .seconds(5)) == nil, "another call is still failing")
        #expect(h.ended(b, succeeded: true, now: .seconds(6)) == .recovered(after: .seconds(5), failures: 5))
        #expect(h.status == .working)
        // The next episode starts afresh.
        let c = h.begin()
        #expect(h.failed(c, busy, now: .seconds(10)) == .failing(busy))
        #expect(h.status == .failing(latest: busy, since: .seconds(10)))
    }

    @Test func aCallThatGaveUpSaysNothingOfTheStore() {
        var h = StoreHealth()
        let a = h.begin()
        _ = h.failed(a, busy, now: .seconds(1))
        #expect(h.ended(a, succeeded: false, now: .seconds(2)) == nil)
        #expect(h.status == .working)
        #expect(h.ended(h.begin(), succeeded: true, now: .seconds(3)) == nil, "a call that never failed changes nothing")
    }

    @Test func aFailureForGoodOutranksTheRestAndKeepsTheFirst() {
        var h = StoreHealth()
        let a = h.begin()
        _ = h.failed(a, busy, now: .seconds(1))
        let typeError = StoreHealth.Failure(bot: "b", operation: "commit", code: "pg-42804", message: "integer, not text")
        h.failedForGood(typeError)
        h.failedForGood(full)
        #expect(h.status == .failed(typeError))
        _ = h.ended(a, succeeded: true, now: .seconds(2))
        #expect(h.status == .failed(typeError))
    }
}

/// The worker against a store whose calls fail (`HookedStore.faults`): what it retries, what it
/// stops for, what the log and the endpoints say meanwhile.
@Suite("Worker: store faults")
struct WorkerFaultTests {
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        func count(_ event: String) -> Int { lines.withLock { $0.filter { $0.contains("event=\(event) ") }.count } }
        var all: String { lines.withLock { $0.joined() } }
    }

    func worker(_ store: HookedStore, _ lines: Lines) throws -> Worker {
        let bot = try BotRuntime(path: try temporaryBot(seedRules).path)
        var options = Worker.Options()
        options.idleWait = .milliseconds(20)
        options.retryDelay = .milliseconds(5)
        options.maxRetryDelay = .milliseconds(20)
        return Worker(store: store, bots: [bot], workerID: "w", options: options, log: Logger(sink: { lines.add($0) }))
    }

    func errors(_ worker: Worker) -> Double {
        (worker.metrics.value("usher_store_errors_total", ["bot": "temp", "code": "busy"]) ?? 0)
    }

    @Test func aTransientErrorIsRetriedSaidOnceAndTheEndpointsSay503() async throws {
        let store = try await HookedStore()
        let lines = Lines()
        let worker = try worker(store, lines)
        store.faults.withLock { $0["commit"] = StoreError("busy", "the database is locked", transient: true) }
        let task = Task { try await worker.run() }
        try await store.append(NewMessage(conversationID: "c", from: .customer, text: "hello"))
        try await eventually("ten failed commits", detail: lines.all) { errors(worker) >= 10 }
        #expect(lines.count("store-error") == 1, "said once, not once per retry:\n\(lines.all)")
        let ready = worker.httpResponse(path: "/readyz"), health = worker.httpResponse(path: "/healthz")
        #expect(ready.status == 503 && ready.body.contains("store failing") && ready.body.contains("busy: the database is locked"),
                "\(ready.body)")
        #expect(health.status == 503 && health.body == ready.body)
        #expect(worker.metrics.value("usher_ready") == 0)

        store.faults.withLock { $0 = [:] }
        try await eventually("the reply", detail: lines.all) { try await allDone(store, bot: "temp") }
        try await eventually("the worker caught up") { worker.httpResponse(path: "/readyz").status == 200 }
        #expect(lines.count("store-recovered") == 1, "\(lines.all)")
        #expect(worker.httpResponse(path: "/healthz").body == "ok\n")
        #expect(worker.metrics.value("usher_ready") == 1)
        #expect(try await store.transcript(conversation: "c").map(\.text) == ["hello", "one"], "answered once")
        worker.requestStop()
        try await task.value
        try await store.close()
    }

    /// A call whose error the loop lets go (a cursor move, retried at the next move) still
    /// stops the worker when retrying cannot mend it: never a live process that does nothing.
    @Test func aPermanentErrorStopsTheWorkerEvenWhereItIsLetGo() async throws {
        let store = try await HookedStore()
        let lines = Lines()
        let worker = try worker(store, lines)
        store.faults.withLock { $0["advanceCursor"] = StoreError("pg-42804", "column \"conversation_id\" is of type integer") }
        let task = Task { try await worker.run() }
        try await store.append(NewMessage(conversationID: "c", from: .customer, text: "hello"))
        let ended = Task {
            do { try await task.value; return "returned" } catch { return "\(error)" }
        }
        let stop = Task {
            // The backstop of a test that would otherwise never end: a worker that goes on.
            try await Task.sleep(for: .seconds(60))
            worker.requestStop()
        }
        let outcome = await ended.value
        stop.cancel()
        #expect(outcome.contains("pg-42804"), "run() throws the error: \(outcome)\n\(lines.all)")
        #expect(lines.count("store-failed") == 1, "\(lines.all)")
        let health = worker.httpResponse(path: "/healthz")
        #expect(health.status == 503 && health.body.hasPrefix("failed: pg-42804"), "\(health.body)")
        #expect(worker.httpResponse(path: "/readyz").status == 503)
        try await store.close()
    }

    /// SIGTERM while the store fails: what was in flight is let go (decided at the next start),
    /// and the stop is clean.
    @Test func aStopWhileRetryingIsClean() async throws {
        let store = try await HookedStore()
        let lines = Lines()
        let worker = try worker(store, lines)
        store.faults.withLock { $0["claimPending"] = StoreError("sqlite-full", "the disk is full", transient: true) }
        let task = Task { try await worker.run() }
        try await store.append(NewMessage(conversationID: "c", from: .customer, text: "hello"))
        try await eventually("failing", detail: lines.all) { worker.httpResponse(path: "/readyz").body.contains("sqlite-full") }
        worker.requestStop()
        try await task.value
        #expect(try await store.transcript(conversation: "c").map(\.text) == ["hello"])
        try await store.close()
    }
}
