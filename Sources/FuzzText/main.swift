// libFuzzer harness for UsherText: normalisation, keyword matching and PCRE2 patterns.
//
//     swift build --scratch-path /tmp/build-fuzz -c debug --sanitize=fuzzer --product FuzzText
//     /tmp/build-fuzz/debug/FuzzText -max_total_time=60
//
// libFuzzer supplies `main` and calls `LLVMFuzzerTestOneInput` for every input. There are no
// top-level statements here (they would only run from Swift's own `main`), and the fixtures are
// static properties, which initialise lazily on first use.
import UsherText

enum Fixture {
    static let keywords = KeywordIndex(keywords: [
        "refund", "money back", "转人工", "人工", "café", "cafe", "straße", "คืนเงิน", "c++", "ＲＥＦＵＮＤ", "",
    ])
    static let literals = LiteralIndex(literals: ["refund", "back", "退款", "K", "é"])
    static let subject = "Refund my order 123-1234567-1234567 please — 我要转人工 café MONEY  back ﷺ \u{200B}!"
    /// Long enough for the time-guarded code path.
    static let longSubject = String(repeating: subject + "\n", count: 4)
    static let limits = PatternLimits(matchLimit: 100_000, depthLimit: 10_000, heapLimitKiB: 4_096,
                                      timeLimit: .milliseconds(5))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)

    let normalized = NormalizedText(text, maxBytes: 4_096)
    precondition(String(decoding: normalized.exact, as: UTF8.self).utf8.elementsEqual(normalized.exact),
                 "normalised text is not valid UTF-8")
    let hits = Fixture.keywords.matches(in: normalized)
    precondition(hits.ids == hits.ids.sorted() && Set(hits.ids).count == hits.ids.count)
    precondition(Normalizer.normalize(Normalizer.normalize(text)) == Normalizer.normalize(text),
                 "normalisation is not idempotent")
    _ = Fixture.literals.matches(in: text)

    if let pattern = try? Pattern(text, limits: Fixture.limits) {
        _ = pattern.match(Fixture.subject)
        _ = pattern.match(Fixture.longSubject)
        _ = pattern.match(utf8: bytes)
        _ = pattern.hasNestedUnboundedQuantifier
        if let literals = pattern.requiredLiterals, case .match = pattern.match(Fixture.subject) {
            precondition(!LiteralIndex(literals: literals).matches(in: Fixture.subject).isEmpty,
                         "a match without any of its required literals")
        }
    }
    return 0
}
