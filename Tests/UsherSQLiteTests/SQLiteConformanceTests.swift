import Foundation
import Testing
import UsherStore
@testable import UsherSQLite

@Suite("SQLite store: conformance")
struct SQLiteConformanceTests {
    static let dir = TempDir()
    static let suite = ConformanceSuite { try await SQLiteStore(path: dir.path("\(UUID().uuidString).db")) }

    @Test(arguments: ConformanceSuite.checks)
    func conformance(_ check: String) async {
        let failures = await Self.suite.run(check)
        #expect(failures.isEmpty, "\(failures)")
    }

    /// Every check again, with each call going to one of two stores open on the same file in turn:
    /// the guarantees hold across connections, not just within one.
    static let split = ConformanceSuite {
        let path = dir.path("\(UUID().uuidString).db")
        return SplitStore([try await SQLiteStore(path: path), try await SQLiteStore(path: path)])
    }

    @Test(arguments: ConformanceSuite.checks)
    func conformanceAcrossTwoConnections(_ check: String) async {
        let failures = await Self.split.run(check)
        #expect(failures.isEmpty, "\(failures)")
    }
}
