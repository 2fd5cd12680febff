/// JSON text that does not read as expected: what is wrong, for people, and the byte offset
/// where it was noticed (callers turn it into a column).
package struct JSONError: Error, Sendable, Equatable {
    /// What is wrong: "trailing comma before '}'".
    package var message: String
    /// Byte offset in the text read.
    package var offset: Int

    package init(_ message: String, at offset: Int) {
        self.message = message
        self.offset = offset
    }
}
