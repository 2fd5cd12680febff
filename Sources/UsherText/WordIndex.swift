/// The keywords that match word by word rather than only as written: by other forms of their
/// words (Snowball stems, one stemmer per language of the bot) and by typos (a word within one
/// or two edits that the bot's dictionaries do not know). `KeywordIndex` owns one when some
/// keyword asks for it; its automata still find every keyword as written.
///
/// A keyword takes part when it is words of letters separated by single spaces ("refund",
/// "money back"); anything else (digits, punctuation, Chinese) matches only as written. A
/// message matches when consecutive words of it, one space apart, match the keyword's words in
/// order, each as written, by form (the same stem in some language of the bot) or as a typo:
///
/// - a keyword word of 5–8 letters takes one edit, of 9 letters or more two (a letter added,
///   missing, changed, or two neighbours swapped), and with forms on its stems take as many;
/// - a word the customer spelled right in one of the bot's languages is never a typo.
///
/// Words are compared as normalised: a keyword without accents against the message's
/// accent-folded words, a keyword with an accent against its words as written — as exact
/// matching does.
///
/// The work per message: one pass to cut the text into words, then per word a few bit tests
/// (`PrefixFilter` for forms, `TypoIndex` for typos); the stemmer, the edit distance and the
/// dictionary run only for the words that pass.
final class WordIndex: Sendable {
    /// One word of a keyword.
    struct Word: Sendable {
        /// As normalised (folded, or exact for an accented keyword).
        let bytes: [UInt8]
        /// Its stem in each language when it matches by form; empty otherwise.
        let stems: [[UInt8]]
        /// How many edits a typo of it may have: 0 when it does not match typos.
        let edits: Int
        /// Its letters, and its stems' letters, for edit distances (when `edits` > 0).
        let letters: [UInt32]
        let stemLetters: [[UInt32]]
    }

    /// One keyword.
    struct Phrase: Sendable {
        let keyword: Int
        /// Matched against the exact text (the keyword has an accent) rather than the folded.
        let accented: Bool
        let words: [Word]
    }

    private let stemmers: [Stemmer]
    private let dictionaries: [SpellingDictionary]
    private let phrases: [Phrase]
    /// Per language: the stem of a phrase's first word → the phrases.
    private let byFirstStem: [[[UInt8]: [Int]]]
    private let prefixes: PrefixFilter
    private let hasForms: Bool
    private let typos: TypoIndex
    private let hasAccented: Bool

    /// `keywords[i]` is keyword id `i`'s normalised text with accents kept (`exact`) and folded;
    /// `matching[i]` how it matches. Forms need `stemmers`; typos check words against
    /// `dictionaries`. Nil when no keyword takes part.
    init?(keywords: [(exact: [UInt8], folded: [UInt8])], matching: [WordMatching], stemmers: [Stemmer],
          dictionaries: [SpellingDictionary]) {
        var phrases: [Phrase] = []
        var byFirstStem = [[[UInt8]: [Int]]](repeating: [:], count: stemmers.count)
        var prefixes = PrefixFilter()
        var typos = TypoIndex()
        var hasForms = false
        var hasAccented = false
        for (id, keyword) in keywords.enumerated() where id < matching.count {
            let forms = matching[id].contains(.forms) && !stemmers.isEmpty
            let typo = matching[id].contains(.typos)
            guard forms || typo else { continue }
            let accented = keyword.exact != keyword.folded
            guard let texts = Self.words(of: accented ? keyword.exact : keyword.folded) else { continue }
            let words = texts.map { text -> Word in
                let letters = text.decodedScalars
                let stems = forms ? stemmers.map { s in text.withUnsafeBufferPointer { s.stem($0) } } : []
                let edits = typo ? Self.edits(letters: letters.count) : 0
                return Word(bytes: text, stems: stems, edits: edits, letters: edits > 0 ? letters : [],
                            stemLetters: edits > 0 ? stems.map(\.decodedScalars) : [])
            }
            guard words.contains(where: { !$0.stems.isEmpty || $0.edits > 0 }) else { continue }
            let p = phrases.count
            let first = words[0]
            for (l, stem) in first.stems.enumerated() {
                prefixes.insert(stem: stem)
                if byFirstStem[l][stem]?.last != p { byFirstStem[l][stem, default: []].append(p) }
                hasForms = true
            }
            if first.edits > 0 {
                typos.insert(first.letters, edits: first.edits, target: .init(phrase: Int32(p), stem: -1))
                for (l, stem) in first.stemLetters.enumerated() where stem != first.letters {
                    typos.insert(stem, edits: first.edits, target: .init(phrase: Int32(p), stem: Int8(l)))
                }
            }
            hasAccented = hasAccented || accented
            phrases.append(Phrase(keyword: id, accented: accented, words: words))
        }
        guard !phrases.isEmpty else { return nil }
        self.stemmers = stemmers
        self.dictionaries = dictionaries
        self.phrases = phrases
        self.byFirstStem = byFirstStem
        self.prefixes = prefixes
        self.hasForms = hasForms
        self.typos = typos
        self.hasAccented = hasAccented
    }

    /// Edits a typo of a keyword word of this many letters may have: none under 5 letters, one up
    /// to 8, two from 9.
    static func edits(letters: Int) -> Int { letters >= 9 ? 2 : letters >= 5 ? 1 : 0 }

    /// The words of a keyword that can match word by word: letters only, one space apart, no
    /// other character. Nil for any other keyword.
    static func words(of keyword: [UInt8]) -> [[UInt8]]? {
        let tokens = WordToken.scan(keyword)
        guard !tokens.isEmpty, tokens[0].start == 0, tokens[tokens.count - 1].end == keyword.count else { return nil }
        for (i, t) in tokens.enumerated() {
            guard t.isWord else { return nil }
            if i > 0 && !(tokens[i - 1].end + 1 == t.start && keyword[t.start - 1] == 0x20) { return nil }
        }
        return tokens.map { Array(keyword[$0.start..<$0.end]) }
    }

    /// Adds the ids of the keywords this message matches by form or typo to `found` (repeats
    /// allowed).
    func collect(in text: NormalizedText, into found: inout [Int]) {
        forEachMatch(in: text) { keyword, _, _ in
            found.append(keyword)
            return true
        }
    }

    /// How keyword `id` matches the message by form or typo, if it does.
    func evidence(for id: Int, in text: NormalizedText) -> KeywordEvidence? {
        var result: KeywordEvidence?
        forEachMatch(in: text) { keyword, how, words in
            guard keyword == id else { return true }
            result = how == .typo ? .typo(words()) : .form(words())
            return false
        }
        return result
    }

    /// How one word matched; ordered, the weakest last (a phrase reports its weakest).
    private enum How: Int, Comparable {
        case exact, form, typo
        static func < (a: How, b: How) -> Bool { a.rawValue < b.rawValue }
    }

    /// Calls `body(keyword, how, the message's words)` for every match until it returns false.
    /// The folded text is read for keywords without accents; for a message with non-ASCII text,
    /// the exact text too for keywords with them (in pure ASCII the two are the same bytes).
    private func forEachMatch(in text: NormalizedText, _ body: (Int, How, () -> String) -> Bool) {
        let ascii = text.isASCII
        let go = text.folded.withUnsafeBufferPointer { folded in
            text.exact.withUnsafeBufferPointer { exact in
                var scan = Scan(index: self, bytes: folded, exact: ascii ? nil : exact, side: ascii ? nil : false)
                return scan.run(body)
            }
        }
        if go && !ascii && hasAccented {
            _ = text.exact.withUnsafeBufferPointer { exact in
                var scan = Scan(index: self, bytes: exact, exact: nil, side: true)
                return scan.run(body)
            }
        }
    }

    /// One pass over one form of a message.
    private struct Scan {
        let index: WordIndex
        let bytes: UnsafeBufferPointer<UInt8>
        /// For the folded form of a non-ASCII message: the text as written, so that the
        /// dictionary sees the customer's accents ("cáncer" is a Spanish word, "cancer" not).
        let exact: UnsafeBufferPointer<UInt8>?
        /// True: accented keywords only; false: the others; nil: both.
        let side: Bool?
        var tokens: [WordToken] = []
        var exactTokens: [WordToken] = []
        /// Per language, per token: its stem, made when first needed.
        var stems: [[[UInt8]?]] = []
        /// Per token: spelled right in some language (nil: not looked up yet).
        var spelled: [Bool?] = []

        init(index: WordIndex, bytes: UnsafeBufferPointer<UInt8>, exact: UnsafeBufferPointer<UInt8>?, side: Bool?) {
            self.index = index
            self.bytes = bytes
            self.exact = exact
            self.side = side
            WordToken.scan(bytes, into: &tokens)
        }

        /// Returns false when `body` asked to stop.
        mutating func run(_ body: (Int, How, () -> String) -> Bool) -> Bool {
            var candidates: [TypoIndex.Target] = []
            for t in tokens.indices where tokens[t].isWord {
                let token = tokens[t]
                if index.hasForms {
                    // Accented keywords stem from the text as written, where a non-ASCII word's
                    // start need not be its stem's (Snowball drops Spanish accents): those always try.
                    let bypass = side == true && !token.isASCII
                    if bypass || index.prefixes.mayMatch(bytes, start: token.start, count: token.count) {
                        for l in index.stemmers.indices {
                            guard let phrases = index.byFirstStem[l][stem(l, t)] else { continue }
                            for p in phrases where !report(p, at: t, body) { return false }
                        }
                    }
                }
                if !index.typos.isEmpty {
                    candidates.removeAll(keepingCapacity: true)
                    withLetters(t) { index.typos.candidates($0, into: &candidates) }
                    for c in candidates where !report(Int(c.phrase), at: t, body) { return false }
                }
            }
            return true
        }

        /// Checks phrase `p` at token `t` and reports it when it matches. Returns false when
        /// `body` asked to stop.
        private mutating func report(_ p: Int, at t: Int, _ body: (Int, How, () -> String) -> Bool) -> Bool {
            let phrase = index.phrases[p]
            if let side, phrase.accented != side { return true }
            let count = phrase.words.count
            guard t + count <= tokens.count else { return true }
            var weakest = How.exact
            for k in 0..<count {
                let token = tokens[t + k]
                if k > 0 {
                    let previous = tokens[t + k - 1]
                    guard token.start == previous.end + 1, bytes[previous.end] == 0x20 else { return true }
                }
                guard token.isWord, let how = match(phrase.words[k], t + k) else { return true }
                weakest = max(weakest, how)
            }
            // As written, the automata found it already.
            if weakest == .exact { return true }
            let start = tokens[t].start, end = tokens[t + count - 1].end
            let bytes = self.bytes
            return body(phrase.keyword, weakest) {
                String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            }
        }

        /// How token `t` matches one keyword word, if it does.
        private mutating func match(_ word: Word, _ t: Int) -> How? {
            let token = tokens[t]
            let text = UnsafeBufferPointer(rebasing: bytes[token.start..<token.end])
            if text.elementsEqual(word.bytes) { return .exact }
            for (l, stem) in word.stems.enumerated() where self.stem(l, t) == stem { return .form }
            guard word.edits > 0 else { return nil }
            let close = withLetters(t) { letters in
                word.letters.withUnsafeBufferPointer { EditDistance.distance(letters, $0, limit: word.edits) <= word.edits }
                    || word.stemLetters.contains { stem in
                        stem.withUnsafeBufferPointer { EditDistance.distance(letters, $0, limit: word.edits) <= word.edits }
                    }
            }
            return close && !isSpelledRight(t) ? .typo : nil
        }

        private mutating func stem(_ l: Int, _ t: Int) -> [UInt8] {
            if stems.isEmpty { stems = Array(repeating: Array(repeating: nil, count: tokens.count), count: index.stemmers.count) }
            if let s = stems[l][t] { return s }
            let token = tokens[t]
            let s = index.stemmers[l].stem(UnsafeBufferPointer(rebasing: bytes[token.start..<token.end]))
            stems[l][t] = s
            return s
        }

        /// Whether some dictionary of the bot knows token `t`, as folded or as written.
        private mutating func isSpelledRight(_ t: Int) -> Bool {
            if spelled.isEmpty { spelled = Array(repeating: nil, count: tokens.count) }
            if let known = spelled[t] { return known }
            var forms = [Array(UnsafeBufferPointer(rebasing: bytes[tokens[t].start..<tokens[t].end]))]
            if let exact {
                if exactTokens.isEmpty { WordToken.scan(exact, into: &exactTokens) }
                // Folding keeps words apart as they were; if it did not, the folded word alone.
                if exactTokens.count == tokens.count {
                    forms.append(Array(UnsafeBufferPointer(rebasing: exact[exactTokens[t].start..<exactTokens[t].end])))
                }
            }
            let known = forms.contains { form in index.dictionaries.contains { $0.contains(form) } }
            spelled[t] = known
            return known
        }

        /// Runs `body` over token `t`'s letters (Unicode scalars).
        private func withLetters<R>(_ t: Int, _ body: (UnsafeBufferPointer<UInt32>) -> R) -> R {
            let token = tokens[t]
            return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: token.count) { letters in
                var n = 0
                if token.isASCII {
                    for i in token.start..<token.end { letters[n] = UInt32(bytes[i]); n += 1 }
                } else {
                    for scalar in String(decoding: UnsafeBufferPointer(rebasing: bytes[token.start..<token.end]), as: UTF8.self).unicodeScalars {
                        letters[n] = scalar.value
                        n += 1
                    }
                }
                return body(UnsafeBufferPointer(rebasing: letters[..<n]))
            }
        }
    }
}
