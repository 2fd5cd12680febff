import Foundation
import Testing
import UsherSQLite
import UsherStore
import UsherStoreTestKit
import UsherWebhook

/// The webhook store as the worker sees it (the state file, not listening): every check of every
/// capability, as for the SQLite store it hands them to.
@Suite("Webhook store conformance")
struct WebhookConformanceTests {
    static let suite = ConformanceSuite(makeStore: {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("usher-webhook-conf-\(UUID().uuidString).db").path
        return try await WebhookStore(database: try await SQLiteStore(path: path), door: MessagesAPI(signer: nil),
                                      options: WebhookStore.Options(callbackURL: "http://127.0.0.1:9/actions"))
    })

    @Test(arguments: ConformanceCheck.checks(for: Set(StoreCapability.allCases)))
    func conformance(_ check: ConformanceCheck) async throws {
        let failures = await Self.suite.run(check)
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test(arguments: [("webhook:http://127.0.0.1:9000/usher", true), ("webhook:https://backend.example/hooks/usher?t=1", true),
                      ("webhook:", false), ("webhook:ftp://x/y", false), ("webhook:/just/a/path", false)])
    func callbackURLs(_ url: String, _ valid: Bool) async throws {
        let opened = await Result { try await WebhookStore.open(StoreRequest(url: url, options: ["--state": ":memory:"]), environment: [:]) }
        if case let .success(store) = opened { try await store.close() }
        #expect(((try? opened.get()) != nil) == valid)
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// Opening a worker's webhook store: what it needs (it listens: a system test).
extension WebhookStoreTests {
    @Test func aWorkerNeedsListenAndASecretUnlessSignaturesAreOff() async throws {
        func error(_ options: [String: String], _ env: [String: String]) async -> String? {
            do {
                let store = try await WebhookStore.open(StoreRequest(url: "webhook:http://127.0.0.1:9/a", options: options.merging(["--state": ":memory:"]) { a, _ in a },
                                                                     worker: true), environment: env)
                try? await store.close()
                return nil
            } catch {
                return (error as? StoreError)?.code
            }
        }
        #expect(await error([:], ["USHER_WEBHOOK_SECRET": "s"]) == "no-listen")
        #expect(await error(["--listen": "127.0.0.1:0"], [:]) == "no-secret")
        #expect(await error(["--listen": "127.0.0.1:0", "--signatures": "maybe"], [:]) == "bad-option")
        #expect(await error(["--listen": "127.0.0.1:0", "--attempts": "0"], ["USHER_WEBHOOK_SECRET": "s"]) == "bad-option")
        #expect(await error(["--listen": "127.0.0.1:0", "--max-backoff": "soon"], ["USHER_WEBHOOK_SECRET": "s"]) == "bad-option")
        #expect(await error(["--listen": "127.0.0.1:0", "--signatures": "off"], [:]) == nil)
        #expect(await error(["--listen": "127.0.0.1:0"], ["USHER_WEBHOOK_SECRET": "s"]) == nil)
    }
}
