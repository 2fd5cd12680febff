import Foundation
import Testing
import UsherSQLite
@testable import UsherStdio

@Suite("stdio: reading stops at a cancellation")
struct LineReaderTests {
    /// A worker asked to stop must not wait for a backend's next line: cancelling the intake
    /// ends its read of an open pipe that says nothing, at once.
    @Test(.timeLimit(.minutes(1)))
    func cancellingEndsAWaitForInput() async throws {
        let pipe = Pipe()   // its writing end stays open: no line, no end of input
        let reader = LineReader(pipe.fileHandleForReading, maxLineBytes: 1 << 10)
        let reading = Task { try await reader.next() }
        reading.cancel()
        await #expect(throws: CancellationError.self) { _ = try await reading.value }
        try pipe.fileHandleForWriting.close()
    }

    /// Lines read ahead are not handed out once the task is cancelled.
    @Test func noLineAfterACancellation() async throws {
        let pipe = Pipe()
        pipe.fileHandleForWriting.write(Data("one\ntwo\n".utf8))
        let reader = LineReader(pipe.fileHandleForReading, maxLineBytes: 1 << 10)
        guard case let .line(first)? = try await reader.next() else { Issue.record("no first line"); return }
        #expect(String(decoding: first, as: UTF8.self) == "one")
        let next = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await reader.next()
        }
        await #expect(throws: CancellationError.self) { _ = try await next.value }
        try pipe.fileHandleForWriting.close()
    }
}
