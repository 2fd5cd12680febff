import Foundation
import UsherEngine
import UsherRules
import UsherText

/// `--only words`: matching with word forms and typos on against exact matching, on the same
/// synthetic rules (100, 1,000 and 10,000 keyword rules plus 20 regexes) and the same 75-byte
/// messages, in the same run (issue 29's goal: at most 1.5× the exact time).
enum WordsBench {
    static func run(quick: Bool) {
        // Reading a hunspell dictionary: once per process, when the first bot with typos loads.
        for language in ["en", "es"] {
            let start = ContinuousClock.now
            guard (try? SpellingDictionary.system(language)) != nil else { print("no \(language) dictionary"); continue }
            print("hunspell dictionary '\(language)' read in \(fmt((ContinuousClock.now - start) / .milliseconds(1), 1)) ms (once per process)")
        }
        print("word forms and typos (bot.yaml: language: en, matching: {word_forms: true, typos: true}) against exact matching")
        for n in [100, 1_000, 10_000] {
            let exact = load(syntheticBot(rules: n))
            let fuzzy = load(syntheticBot(rules: n, botLines: "language: en\nmatching: {word_forms: true, typos: true}\n"))
            var sink = 0
            let iterations = quick ? 20_000 : 200_000
            // Alternate the two, so that a burst of load elsewhere hits both alike.
            var exactNs = Double.infinity, fuzzyNs = Double.infinity
            for _ in 0..<(quick ? 2 : 5) {
                exactNs = min(exactNs, measure(iterations: iterations, rounds: 1) { i in
                    sink &+= Engine.candidateRules(exact, text: messages[i % messages.count]).count
                })
                fuzzyNs = min(fuzzyNs, measure(iterations: iterations, rounds: 1) { i in
                    sink &+= Engine.candidateRules(fuzzy, text: messages[i % messages.count]).count
                })
            }
            print("\(String(n).padding(toLength: 6, withPad: " ", startingAt: 0)) keyword rules: exact \(fmt(exactNs)) ns/message, forms + typos \(fmt(fuzzyNs)) ns/message = \(fmt(fuzzyNs / exactNs, 2))×   [target ≤ 1.5×]")
            if sink == -1 { print(sink) }
        }
    }

    static func load(_ files: [String: String]) -> RuleSet {
        guard let rs = RuleSetLoader.loadBot(botPath: "bench/bot.yaml", files: files).ruleSet else {
            print("the synthetic bot did not load")
            exit(1)
        }
        return rs
    }
}
