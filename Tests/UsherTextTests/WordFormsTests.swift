import Testing
import UsherText

@Suite struct WordFormsTests {
    static let english = [Stemmer(language: "en")!]
    static let englishAndSpanish = [Stemmer(language: "en")!, Stemmer(language: "es")!]

    /// (keyword, message, matches with forms on). Every row also checks that the keyword
    /// without forms matches exactly as `KeywordIndex` always did.
    static let table: [(keyword: String, message: String, matches: Bool)] = [
        ("refund", "I want my refunds", true),
        ("refund", "I was refunded twice", true),
        ("refund", "REFUNDING takes long", true),
        ("refund", "I want a refund", true),
        ("cancel", "I am cancelling the order", true),
        ("cancel", "it was cancelled", true),
        ("cancel", "cancellation please", true),
        ("cancelled", "please cancel it", true),
        ("hope", "hoping for news", true),
        ("happy", "not happiness", true),
        ("cancel", "cancer treatment", false),
        ("card", "my cart is empty", false),
        ("refund", "nonrefundable", false),
        ("refund", "refund2", false),
        ("refund", "refund_policy", false),
        ("ty", "tys", false),                   // one or two letters: as written only
        // Phrases: every word by form, one space apart.
        ("money back", "I want moneys backed", true),
        ("money back", "money, back", false),
        ("money back", "money", false),
        ("order number", "what ordering numbers", true),
        // Next to Chinese, a word is still a word.
        ("refund", "我要refunds", true),
        // Keywords that are not plain words match only as written.
        ("order 2", "orders 2", false),
        ("e-mail", "two e-mails", false),
        ("退款", "退款", true),
    ]

    @Test(arguments: table)
    func formsMatch(_ row: (keyword: String, message: String, matches: Bool)) {
        let forms = KeywordIndex(keywords: [row.keyword], matching: [.forms], stemmers: Self.english)
        let exact = KeywordIndex(keywords: [row.keyword])
        let text = NormalizedText(row.message)
        #expect(forms.matches(in: text).contains(0) == row.matches, "\(row.keyword) in \(row.message)")
        // Forms only ever add matches.
        if exact.matches(in: text).contains(0) { #expect(forms.matches(in: text).contains(0)) }
    }

    @Test func exactKeywordsIgnoreForms() {
        let index = KeywordIndex(keywords: ["refund", "refund"], matching: [.forms, .exact], stemmers: Self.english)
        let hits = index.matches(in: NormalizedText("two refunds"))
        #expect(hits.ids == [0])
    }

    @Test func withoutLanguagesThereAreNoForms() {
        let index = KeywordIndex(keywords: ["refund"], matching: [.forms], stemmers: [])
        #expect(index.matches(in: NormalizedText("refunds")).isEmpty)
    }

    @Test func spanishFormsInATwoLanguageBot() {
        let index = KeywordIndex(keywords: ["reembolso", "cancelar", "devolución", "refund"],
                                 matching: Array(repeating: .forms, count: 4), stemmers: Self.englishAndSpanish)
        #expect(index.matches(in: NormalizedText("quiero mis reembolsos")).ids == [0])
        #expect(index.matches(in: NormalizedText("ya está cancelado")).ids == [1])
        #expect(index.matches(in: NormalizedText("las devoluciones")).ids == [2])
        #expect(index.matches(in: NormalizedText("DEVOLUCIÓN")).ids == [2])
        #expect(index.matches(in: NormalizedText("refunds")).ids == [3])
    }

    /// A keyword written with an accent keeps needing it, as in exact matching; one without
    /// matches with or without.
    @Test func accentsAsInExactMatching() {
        let index = KeywordIndex(keywords: ["año", "cafe"], matching: [.forms, .forms], stemmers: Self.englishAndSpanish)
        #expect(index.matches(in: NormalizedText("los años")).ids == [0])
        #expect(index.matches(in: NormalizedText("los anos")).ids == [])
        #expect(index.matches(in: NormalizedText("dos cafés")).ids == [1])
        #expect(index.matches(in: NormalizedText("two cafes")).ids == [1])
    }

    @Test func evidenceSaysHow() {
        let index = KeywordIndex(keywords: ["refund", "money back"], matching: [.forms, .forms], stemmers: Self.english)
        #expect(index.evidence(for: 0, in: NormalizedText("a refund")) == .exact)
        #expect(index.evidence(for: 0, in: NormalizedText("two Refunds")) == .form("refunds"))
        #expect(index.evidence(for: 1, in: NormalizedText("MONEYS backing")) == .form("moneys backing"))
        #expect(index.evidence(for: 0, in: NormalizedText("hello")) == nil)
    }

    @Test func stemmerLanguages() {
        #expect(Stemmer.isAvailable("en"))
        #expect(Stemmer.isAvailable("es"))
        #expect(!Stemmer.isAvailable("zh"))
        #expect(!Stemmer.isAvailable("EN"))
        #expect(!Stemmer.isAvailable(""))
        #expect(Stemmer(language: "en")!.stem("cancelling") == "cancel")
    }
}
