public import Foundation
public import UsherStore

/// Feeds JSON lines (DESIGN.md §5 transcript events, and `{"conversation":…,"event":"close"}`)
/// into a store, as a chat backend would write them. A malformed line gets one error line —
/// `stdin:LINE: error: what is wrong`, with `:COLUMN` after the line when the JSON does not
/// parse — on the error sink and is skipped; reading goes on.
public struct StdioIntake: Sendable {
    /// What a run read.
    public struct Summary: Sendable, Hashable {
        /// Lines read (blank ones included).
        public var lines = 0
        /// Messages and close events written to the store.
        public var appended = 0
        /// Lines whose message id was already in the store (input fed again after a restart).
        public var duplicates = 0
        /// Lines reported and skipped.
        public var malformed = 0
        public init() {}
    }

    private let store: any SequencedStore & BackendStore
    private let errors: any LineSink
    private let source: String
    private let clock: @Sendable () -> Date
    private let maxLineBytes: Int

    /// - Parameters:
    ///   - source: the name error lines start with.
    ///   - maxLineBytes: longer lines are reported and skipped (default 16 MiB).
    public init(store: any SequencedStore & BackendStore, errors: any LineSink = FileHandleSink.standardError, source: String = "stdin",
                maxLineBytes: Int = 16 << 20, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.errors = errors
        self.source = source
        self.maxLineBytes = maxLineBytes
        self.clock = clock
    }

    /// Reads `input` to its end. Store errors end the run (they are thrown); bad lines do not.
    @discardableResult
    public func run(input: FileHandle) async throws -> Summary {
        let reader = LineReader(input, maxLineBytes: maxLineBytes)
        var summary = Summary()
        while let line = try await reader.next() {
            summary.lines += 1
            switch line {
            case .tooLong:
                report(summary.lines, "line longer than \(maxLineBytes) bytes; skipped")
                summary.malformed += 1
            case let .line(bytes):
                try await ingest(bytes, number: summary.lines, into: &summary)
            }
        }
        return summary
    }

    /// Feeds one line (its bytes, without the newline) as line `number`.
    public func ingest(_ line: String, number: Int) async throws -> Summary {
        var summary = Summary()
        summary.lines = 1
        try await ingest(ArraySlice(line.utf8), number: number, into: &summary)
        return summary
    }

    private func ingest(_ bytes: ArraySlice<UInt8>, number: Int, into summary: inout Summary) async throws {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
        let message: NewMessage
        do {
            message = try InputLine.parse(bytes, number: number, source: source, now: clock())
        } catch {
            report(number, column: error.column, error.message)
            summary.malformed += 1
            return
        }
        // A message already in the store (input fed again) keeps its place: `append` returns it,
        // with a seq no newer than the newest before this call.
        let before = try await store.latestSeq()
        let stored = try await store.append(message)
        if stored.seq > before { summary.appended += 1 } else { summary.duplicates += 1 }
    }

    private func report(_ number: Int, column: Int? = nil, _ message: String) {
        try? errors.write(["\(source):\(number)\(column.map { ":\($0)" } ?? ""): error: \(message)"])
    }
}
