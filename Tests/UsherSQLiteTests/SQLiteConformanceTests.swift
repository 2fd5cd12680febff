import Foundation
import Testing
import UsherStore
import UsherStoreTestKit
@testable import UsherSQLite

@Suite("SQLite store: conformance")
struct SQLiteConformanceTests {
    static let dir = TempDir()
    static let suite = ConformanceSuite(makeStore: { try await SQLiteStore(path: dir.path("\(UUID().uuidString).db")) })

    @Test(arguments: ConformanceCheck.checks(for: Set(StoreCapability.allCases)))
    func conformance(_ check: ConformanceCheck) async {
        let failures = await Self.suite.run(check)
        #expect(failures.isEmpty, "\(failures)")
    }

    /// Every check again, with each call going to one of two stores open on the same file in turn:
    /// the guarantees hold across connections, not just within one.
    static let split = ConformanceSuite(makeStore: {
        let path = dir.path("\(UUID().uuidString).db")
        return SplitStore([try await SQLiteStore(path: path), try await SQLiteStore(path: path)])
    })

    @Test(arguments: ConformanceCheck.checks(for: Set(StoreCapability.allCases)))
    func conformanceAcrossTwoConnections(_ check: ConformanceCheck) async {
        let failures = await Self.split.run(check)
        #expect(failures.isEmpty, "\(failures)")
    }
}
