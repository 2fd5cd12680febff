/// JSON text that does not read as expected: what is wrong, for people, and the byte offset
/// where it was noticed (callers turn it into a column).
public struct JSONError: Error, Sendable, Equatable {
    /// What is wrong: "trailing comma before '}'".
    public var message: String
    /// Byte offset in the text read.
    public var offset: Int

    /// `message` about the byte at `offset`.
    public init(_ message: String, at offset: Int) {
        self.message = message
        self.offset = offset
    }
}
