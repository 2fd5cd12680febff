import Testing
import UsherStore
import UsherStoreTestKit

@Suite("In-memory store: conformance")
struct InMemoryStoreTests {
    /// The core alone, with the tests' backend beside it.
    static let suite = ConformanceSuite(makeSubject: {
        let store = InMemoryStore()
        return ConformanceSubject(store: store, append: { try await store.append($0) },
                                  transcript: { try await store.transcript(conversation: $0) })
    })

    @Test(arguments: ConformanceCheck.checks(for: [.core]))
    func conformance(_ check: ConformanceCheck) async {
        let failures = await Self.suite.run(check)
        #expect(failures.isEmpty, "\(failures)")
    }
}

@Suite("Conformance kit")
struct ConformanceKitTests {
    /// A check of a capability the store does not offer fails, naming the capability.
    @Test func aCheckBeyondTheStoresCapabilitiesFails() async {
        let failures = await InMemoryStoreTests.suite.run(.leases)
        #expect(failures == ["leases: the store does not offer the capability 'shared' this check needs"])
    }

    /// The in-memory store offers the core and nothing else.
    @Test func theInMemoryStoreIsTheCoreAlone() {
        #expect(StoreCapability.offered(by: InMemoryStore()) == [.core])
    }
}
