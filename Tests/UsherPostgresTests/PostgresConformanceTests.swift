import Foundation
import Testing
import UsherPostgresTestServer
import UsherStore
import UsherStoreTestKit
@testable import UsherPostgres

/// The server every PostgreSQL test uses (one per test process), and a fresh database per store.
enum TestDB {
    static var server: PostgresTestServer {
        get async throws { try await PostgresTestServer.ready() }
    }

    /// A new, empty database with Usher's schema.
    static func store(_ options: PostgresStore.Options = .init()) async throws -> PostgresStore {
        try await PostgresStore(url: try await server.createDatabase(), options: options)
    }
}

@Suite("PostgreSQL store: conformance", .serialized)
struct PostgresConformanceTests {
    static let suite = ConformanceSuite(makeStore: { try await TestDB.store() })

    @Test(arguments: ConformanceCheck.checks(for: Set(StoreCapability.allCases)))
    func conformance(_ check: ConformanceCheck) async {
        let failures = await Self.suite.run(check)
        #expect(failures.isEmpty, "\(failures)")
    }

    /// Every check again with calls alternating between two stores (two connections, as two
    /// workers would have) on the same database. Claims read every time
    /// (`Options.takeNotified` off): a claim taken from the notes of one store would not know
    /// what the other store's reads returned — a worker makes its claims through one store.
    static let split = ConformanceSuite(makeStore: {
        let url = try await TestDB.server.createDatabase()
        var options = PostgresStore.Options()
        options.takeNotified = false
        return SplitStore([try await PostgresStore(url: url, options: options), try await PostgresStore(url: url, options: options)])
    })

    @Test(arguments: ConformanceCheck.checks(for: Set(StoreCapability.allCases)))
    func conformanceAcrossTwoConnections(_ check: ConformanceCheck) async {
        let failures = await Self.split.run(check)
        #expect(failures.isEmpty, "\(failures)")
    }
}
