import Testing
import UsherStore

@Suite("In-memory store: conformance")
struct InMemoryStoreTests {
    static let suite = ConformanceSuite { InMemoryStore() }

    @Test(arguments: ConformanceSuite.checks)
    func conformance(_ check: String) async {
        let failures = await Self.suite.run(check)
        #expect(failures.isEmpty, "\(failures)")
    }
}
