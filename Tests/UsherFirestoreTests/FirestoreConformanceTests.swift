import Foundation
import Testing
import UsherFirestoreTestServer
import UsherStore
import UsherStoreTestKit
@testable import UsherFirestore

/// A store on a project of its own in the test run's emulator.
/// A bot with no position starts at the beginning (`--from beginning`) unless `start` says.
func openStore(_ project: String? = nil, layout: FirestoreLayout = .seed, options: FirestoreStore.Options = .init(),
               start: StartPosition = .beginning) async throws -> FirestoreStore {
    let emulator = try await FirestoreEmulator.ready()
    let store = try await FirestoreStore.open(StoreRequest(url: "firestore://" + (project ?? emulator.project()), worker: true, start: start),
                                              environment: ["FIRESTORE_EMULATOR_HOST": emulator.host], options: options)
    guard layout == .seed else { return FirestoreStore(rest: store.rest, layout: layout, worker: store.worker, options: options) }
    return store
}

@Suite("Firestore store: conformance (emulator)")
struct FirestoreConformanceTests {
    static let suite = ConformanceSuite(makeStore: { try await openStore() })

    @Test(arguments: ConformanceCheck.checks(for: [.core, .backend]))
    func conformance(_ check: ConformanceCheck) async {
        let failures = await Self.suite.run(check)
        #expect(failures.isEmpty, "\(failures)")
    }
}
