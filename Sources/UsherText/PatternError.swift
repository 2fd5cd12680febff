/// A pattern PCRE2 would not compile.
public struct PatternError: Error, Sendable, Equatable {
    /// PCRE2's description, e.g. "missing closing parenthesis".
    public let message: String
    /// Where PCRE2 stopped, in Unicode scalars from the start of the pattern.
    public let offset: Int

    public init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }
}
