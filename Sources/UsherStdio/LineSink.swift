/// Where the stdio adapter writes lines: actions (stdout) and input errors (stderr).
public protocol LineSink: Sendable {
    /// Writes each line followed by a newline, in order, before returning.
    func write(_ lines: [String]) throws
}
