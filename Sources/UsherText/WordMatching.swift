/// How a keyword may match besides its exact words (bot.yaml's `matching`, a rule's or keyword's
/// `exact: true` turning it off).
public struct WordMatching: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Other forms of the same word, through the bot's languages' Snowball stemmers:
    /// "refunds" and "refunded" match "refund".
    public static let forms = WordMatching(rawValue: 1)
    /// Misspellings: a word that is not in the dictionary, within one edit of a keyword of 5–8
    /// letters or two edits of a longer one.
    public static let typos = WordMatching(rawValue: 2)

    /// Exact matching only.
    public static let exact: WordMatching = []
}

/// How a keyword was found in a message, for `usher explain`.
public enum KeywordEvidence: Sendable, Hashable {
    /// The keyword's own words.
    case exact
    /// Another form of the keyword's words: these words of the message (normalised).
    case form(String)
    /// A misspelling of the keyword (or of one of its forms): these words of the message.
    case typo(String)
}
