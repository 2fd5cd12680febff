public import Foundation
import UsherSQLite
import UsherStore

/// Writes lines to a file handle (stdout, stderr, a file), one `write` call per batch.
public final class FileHandleSink: LineSink {
    private let handle: Locked<FileHandle>

    public init(_ handle: FileHandle) {
        self.handle = Locked(handle)
    }

    /// The process's standard output.
    public static var standardOutput: FileHandleSink { FileHandleSink(.standardOutput) }
    /// The process's standard error.
    public static var standardError: FileHandleSink { FileHandleSink(.standardError) }

    public func write(_ lines: [String]) throws {
        if lines.isEmpty { return }
        var text = lines.joined(separator: "\n")
        text.append("\n")
        try handle.withLock { try $0.write(contentsOf: Data(text.utf8)) }
    }
}
