/// The keywords that match word by word rather than only as written: by other forms of their
/// words (Snowball stems, one stemmer per language of the bot) and by typos (a word within one
/// or two edits that the bot's dictionaries do not know). `KeywordIndex` owns one when some
/// keyword asks for it; its automata still find every keyword as written.
///
/// A keyword takes part when it is words of letters separated by single spaces ("refund",
/// "money back"); anything else (digits, punctuation, Chinese) matches only as written, and so
/// does a word of one or two letters ("ty", the "u" of "sue u"). A
/// message matches when consecutive words of it, one space apart, match the keyword's words in
/// order, each as written, by form (the same stem in some language of the bot) or as a typo:
///
/// - a keyword word of 5–8 letters takes one edit, of 9 letters or more two (a letter added,
///   missing, changed, or two neighbours swapped), counted against the word as written: a typo
///   of its stem would be a typo of another word as often ("thnk" is "think" as often as "thank");
/// - a typo has 5 letters at least: a word of four is one edit from too many others;
/// - a word the customer spelled right in one of the bot's languages is never a typo, nor one
///   that is such a word without its apostrophe ("arent" is "aren't", not a typo of "agent").
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
        /// Its letters, for edit distances (when `edits` > 0).
        let letters: [UInt32]
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
    /// Stems and dictionary answers of the words messages had, across messages.
    private let facts: WordFacts

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
                let stems = forms && letters.count >= Self.shortestForm
                    ? stemmers.map { s in text.withUnsafeBufferPointer { s.stem($0) } } : []
                let edits = typo ? Self.edits(letters: letters.count) : 0
                return Word(bytes: text, stems: stems, edits: edits, letters: edits > 0 ? letters : [])
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
                typos.insert(first.letters, edits: first.edits, phrase: Int32(p))
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
        facts = WordFacts()
    }

    /// Edits a typo of a keyword word of this many letters may have: none under 5 letters, one up
    /// to 8, two from 9.
    static func edits(letters: Int) -> Int { letters >= 9 ? 2 : letters >= 5 ? 1 : 0 }

    /// The fewest letters a keyword word needs to match by form: "ty" or "u" would send every
    /// word starting with "t" or "u" to the stemmer, for forms nobody writes.
    static let shortestForm = 3

    /// The fewest letters a typo has: a word of four is one edit from too many others ("agen" is
    /// "again" more often than "agent").
    static let shortestTypo = 5

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
                scan(folded, exact: ascii ? nil : exact, side: ascii ? nil : false, body)
            }
        }
        if go && !ascii && hasAccented {
            _ = text.exact.withUnsafeBufferPointer { exact in scan(exact, exact: nil, side: true, body) }
        }
    }

    /// What one pass over a message has worked out so far. The words sit in the caller's stack
    /// buffer; stems and dictionary answers are made only for the few words that need them.
    private struct Scan {
        let bytes: UnsafeBufferPointer<UInt8>
        let tokens: UnsafeBufferPointer<WordToken>
        /// For the folded form of a non-ASCII message: the text as written, so that the
        /// dictionary sees the customer's accents ("cáncer" is a Spanish word, "cancer" not).
        let exact: UnsafeBufferPointer<UInt8>?
        /// True: accented keywords only; false: the others; nil: both.
        let side: Bool?
        /// The stems worked out so far. A message needs few.
        var stems: [KnownStem] = []
        /// The tokens found spelled right or not so far.
        var spelled: [KnownSpelling] = []
        var exactTokens: [WordToken] = []

        func word(_ t: Int) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: bytes[tokens[t].start..<tokens[t].end])
        }
    }

    /// A token's stem in one language (a struct, not a tuple: tuple types' metadata is looked
    /// up at run time, on every use).
    private struct KnownStem {
        let token: Int
        let language: Int
        let stem: [UInt8]
    }

    private struct KnownSpelling {
        let token: Int
        let known: Bool
    }

    /// One pass over one form of a message. Returns false when `body` asked to stop.
    private func scan(_ bytes: UnsafeBufferPointer<UInt8>, exact: UnsafeBufferPointer<UInt8>?, side: Bool?,
                      _ body: (Int, How, () -> String) -> Bool) -> Bool {
        // A word takes two bytes at least (a letter and what ends it), so this many always fit.
        withUnsafeTemporaryAllocation(of: WordToken.self, capacity: bytes.count / 2 + 1) { buffer in
            let count = WordToken.scan(bytes, into: buffer)
            var scan = Scan(bytes: bytes, tokens: UnsafeBufferPointer(rebasing: buffer[..<count]), exact: exact, side: side)
            var candidates: [Int32] = []
            for t in 0..<count where buffer[t].isWord {
                let token = buffer[t]
                if hasForms {
                    // Accented keywords stem from the text as written, where a non-ASCII word's
                    // start need not be its stem's (Snowball drops Spanish accents): those always try.
                    let bypass = side == true && !token.isASCII
                    if bypass || prefixes.mayMatch(bytes, start: token.start, count: token.count) {
                        for l in stemmers.indices {
                            guard let phrases = byFirstStem[l][stem(l, t, &scan)] else { continue }
                            for p in phrases where !report(p, at: t, &scan, body) { return false }
                        }
                    }
                }
                guard typos.maxEdits > 0 else { continue }
                if token.isASCII {
                    guard typos.reaches(letters: token.count) else { continue }
                    // A long word costs dozens of look-ups for two edits, a dictionary check one:
                    // most long words of a message are spelled right.
                    let word = scan.word(t)
                    if typos.edits(letters: token.count) > 1 && dictionaries.contains(where: { $0.surelyKnows(word) }) {
                        continue
                    }
                    typos.candidates(word, into: &candidates)
                } else {
                    let letters = String(decoding: scan.word(t), as: UTF8.self).unicodeScalars.map(\.value)
                    letters.withUnsafeBufferPointer { typos.candidates($0, into: &candidates) }
                }
                guard !candidates.isEmpty else { continue }
                for c in candidates where !report(Int(c), at: t, &scan, body) { return false }
                candidates.removeAll(keepingCapacity: true)
            }
            return true
        }
    }

    /// Checks phrase `p` at token `t` and reports it when it matches. Returns false when `body`
    /// asked to stop.
    private func report(_ p: Int, at t: Int, _ scan: inout Scan, _ body: (Int, How, () -> String) -> Bool) -> Bool {
        let phrase = phrases[p]
        if let side = scan.side, phrase.accented != side { return true }
        let count = phrase.words.count
        let tokens = scan.tokens
        guard t + count <= tokens.count else { return true }
        var weakest = How.exact
        for k in 0..<count {
            let token = tokens[t + k]
            if k > 0 {
                let previous = tokens[t + k - 1]
                guard token.start == previous.end + 1, scan.bytes[previous.end] == 0x20 else { return true }
            }
            guard token.isWord, let how = match(phrase.words[k], t + k, &scan) else { return true }
            weakest = max(weakest, how)
        }
        // As written, the automata found it already.
        if weakest == .exact { return true }
        let words = UnsafeBufferPointer(rebasing: scan.bytes[tokens[t].start..<tokens[t + count - 1].end])
        return body(phrase.keyword, weakest) { String(decoding: words, as: UTF8.self) }
    }

    /// How token `t` matches one keyword word, if it does.
    private func match(_ word: Word, _ t: Int, _ scan: inout Scan) -> How? {
        let text = scan.word(t)
        if text.elementsEqual(word.bytes) { return .exact }
        for (l, stem) in word.stems.enumerated() where self.stem(l, t, &scan) == stem { return .form }
        guard word.edits > 0 else { return nil }
        let letters = scan.tokens[t].isASCII ? text.map(UInt32.init) : String(decoding: text, as: UTF8.self).unicodeScalars.map(\.value)
        guard letters.count >= Self.shortestTypo else { return nil }
        let close = EditDistance.distance(letters, word.letters, limit: word.edits) <= word.edits
        return close && !isSpelledRight(t, &scan) ? .typo : nil
    }

    private func stem(_ l: Int, _ t: Int, _ scan: inout Scan) -> [UInt8] {
        if let known = scan.stems.first(where: { $0.token == t && $0.language == l }) { return known.stem }
        let word = scan.word(t)
        let s: [UInt8]
        if let remembered = facts.stem(word, language: l) {
            s = remembered
        } else {
            s = stemmers[l].stem(word)
            facts.learn(word, language: l, stem: s)
        }
        scan.stems.append(KnownStem(token: t, language: l, stem: s))
        return s
    }

    /// Whether some dictionary of the bot knows token `t`, as folded or as written.
    private func isSpelledRight(_ t: Int, _ scan: inout Scan) -> Bool {
        if let known = scan.spelled.first(where: { $0.token == t }) { return known.known }
        // The answer depends on the word as written too (its accents): remembered only when
        // the scan reads the text as written (a pure ASCII message is both forms at once).
        let word = scan.word(t)
        let remember = scan.exact == nil
        if remember, let known = facts.spelled(word) {
            scan.spelled.append(KnownSpelling(token: t, known: known))
            return known
        }
        var forms = [Array(word)]
        if let exact = scan.exact {
            if scan.exactTokens.isEmpty { WordToken.scan(exact, into: &scan.exactTokens) }
            // Folding keeps words apart as they were; if it did not, the folded word alone.
            if scan.exactTokens.count == scan.tokens.count {
                forms.append(Array(exact[scan.exactTokens[t].start..<scan.exactTokens[t].end]))
            }
        }
        let known = forms.contains { form in dictionaries.contains { $0.contains(form) || $0.containsWithApostrophe(form) } }
        scan.spelled.append(KnownSpelling(token: t, known: known))
        if remember { facts.learn(word, spelled: known) }
        return known
    }
}
