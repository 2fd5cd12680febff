import Testing
import UsherText

@Suite struct LiteralIndexTests {
    @Test func findsLiteralsCaseInsensitivelyInTheOriginalText() {
        let index = LiteralIndex(literals: ["charge", "back", "Order", "退款", "", "é"])
        #expect(index.matches(in: "CHARGEBACK on my ORDER").ids == [0, 1, 2])
        #expect(index.matches(in: "申请退款").ids == [3])
        #expect(index.matches(in: "É").ids == [])        // only ASCII letters fold
        #expect(index.matches(in: "café").ids == [5])
        #expect(index.matches(in: "").isEmpty)
        #expect(LiteralIndex(literals: []).matches(in: "anything").isEmpty)
    }

    @Test func overlappingAndNestedLiterals() {
        let index = LiteralIndex(literals: ["he", "she", "his", "hers"])
        #expect(index.matches(in: "USHERS").ids == [0, 1, 3])
        #expect(index.matches(in: "ahishers").ids == [0, 1, 2, 3])
    }
}
