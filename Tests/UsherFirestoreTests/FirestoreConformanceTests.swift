import Foundation
import Testing
import UsherFirestoreTestServer
import UsherStore
import UsherStoreTestKit
@testable import UsherFirestore

/// A store on a project of its own in the test run's emulator.
func openStore(_ project: String? = nil, layout: FirestoreLayout = .seed, options: FirestoreStore.Options = .init()) async throws -> FirestoreStore {
    let emulator = try await FirestoreEmulator.ready()
    let store = try await FirestoreStore.open(StoreRequest(url: "firestore://" + (project ?? emulator.project()), worker: true),
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
