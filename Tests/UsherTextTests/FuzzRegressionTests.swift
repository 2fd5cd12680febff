import Testing
import UsherText

/// Inputs the FuzzText harness once crashed on, run through the same steps as the harness.
@Suite struct FuzzRegressionTests {
    @Test(arguments: [
        "[é-ü]+x",          // a class range above ASCII made an empty (invalid) Range
    ])
    func harnessSurvives(input: String) throws {
        let normalized = NormalizedText(input, maxBytes: 4_096)
        _ = KeywordIndex(keywords: ["refund", "转人工", "café"]).matches(in: normalized)
        let pattern = try Pattern(input)
        _ = pattern.match("Refund my order — 我要转人工 café")
        _ = pattern.hasNestedUnboundedQuantifier
        _ = pattern.requiredLiterals
    }

    @Test func classRangeAboveASCII() throws {
        #expect(try Pattern("[é-ü]+x").requiredLiterals == ["x"])
        #expect(try Pattern("([é-ü]+,)+").hasNestedUnboundedQuantifier == false)
        #expect(try Pattern("([é-ü]+é)+").hasNestedUnboundedQuantifier == true)
    }
}
