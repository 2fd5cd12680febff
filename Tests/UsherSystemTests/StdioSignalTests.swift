#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import UsherStore
import UsherTestSupport

/// SIGTERM to `usher run --store stdio` while its input is still open: it stops reading, finishes
/// what it holds and exits 0; the same input given again answers what was left, nothing twice.
@Suite("stdio worker and SIGTERM", .serialized)
struct StdioSignalTests {
    /// A stdio worker whose stdin stays open until `close()`; its stdout and stderr are read as
    /// they come.
    final class StdioWorker: @unchecked Sendable {
        // @unchecked: `process` and `stdin` are used by one test task; the output is behind locks.
        let process = Process()
        private let stdin = Pipe()
        private let out = Locked(Data()), err = Locked(Data())

        init(bot: String, state: String) throws {
            process.executableURL = try usherBinary()
            process.arguments = ["run", bot, "--store", "stdio:\(state)", "--log-level", "info"]
            let stdout = Pipe(), stderr = Pipe()
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = stderr
            try process.run()
            for (pipe, sink) in [(stdout, out), (stderr, err)] {
                let handle = pipe.fileHandleForReading
                Thread.detachNewThread {
                    while let chunk = try? readChunk(handle), !chunk.isEmpty { sink.withLock { $0.append(chunk) } }
                }
            }
        }

        func write(_ lines: [String]) { stdin.fileHandleForWriting.write(Data(lines.map { $0 + "\n" }.joined().utf8)) }
        func close() throws { try stdin.fileHandleForWriting.close() }
        var log: String { String(decoding: err.withLock { $0 }, as: UTF8.self) }

        /// The reply lines written so far: conversation and idempotency key of each.
        var replies: [(conversation: String, key: String)] {
            let text = String(decoding: out.withLock { $0 }, as: UTF8.self)
            return text.split(separator: "\n").compactMap { line in
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], o["type"] as? String == "reply",
                      let c = o["conversation"] as? String, let k = o["key"] as? String else { return nil }
                return (c, k)
            }
        }

        /// Waits for the process to end (a minute at most); its status.
        func exitStatus() async throws -> Int32 {
            try await eventually("the worker to exit", timeout: .seconds(60), detail: log) { !process.isRunning }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    @Test func sigtermWhileReadingExitsZeroAndARerunGivesNothingTwice() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let state = scratch.dir.appendingPathComponent("state.db").path
        let lines = (0..<20).map { #"{"conversation":"s\#($0)","id":"s\#($0)-m","from":"customer","text":"hello"}"# }

        let first = try StdioWorker(bot: scratch.bot, state: state)
        first.write(Array(lines[..<10]))
        try await eventually("the first ten answered", detail: first.log) { first.replies.count == 10 }
        // Ten more, and SIGTERM at once: some are answered, some taken in only, some not read.
        first.write(Array(lines[10...]))
        kill(first.process.processIdentifier, SIGTERM)
        let status = try await first.exitStatus()
        #expect(status == 0, "\(first.log)")
        #expect(first.log.contains("event=intake-stopped"), "the read of stdin ended at the stop:\n\(first.log)")
        #expect(!first.log.contains("shutdown-deadline"), "nothing was cut off at the deadline:\n\(first.log)")
        try first.close()

        // The backend gives the same input again, to its end.
        let again = try StdioWorker(bot: scratch.bot, state: state)
        again.write(lines)
        try again.close()
        #expect(try await again.exitStatus() == 0, "\(again.log)")

        let both = first.replies + again.replies
        #expect(Set(first.replies.map(\.key)).isDisjoint(with: again.replies.map(\.key)), "a reply written twice")
        #expect(both.map(\.conversation).sorted() == (0..<20).map { "s\($0)" }.sorted(),
                "each conversation answered once: \(both.map(\.conversation).sorted())")
    }
}
