public import Foundation
import UsherEngine
public import UsherSQLite
public import UsherStore

/// The JSON-lines store (`--store stdio`): messages come in on stdin (`StdioIntake`), actions go
/// out on stdout, and everything in between — messages, state, done marks, what was already
/// written out — lives in an embedded SQLite file, so a restart with the same file neither
/// decides a message twice nor writes an action twice.
///
/// Every commit is written through a `SQLiteStore` first; then the actions it committed and not
/// yet written are written to `output` and marked written, in one transaction (see
/// `SQLiteStore.deliverActions`). Opening the store writes whatever a crash left committed but
/// unwritten. Only a crash between the write to `output` and that mark can repeat an action
/// (once, after the restart); every line carries its idempotency key (`key`) for that case.
public final class StdioStore: SQLiteBackedStore, IntakeStore {
    /// The state file when the URL names none.
    public static let defaultPath = "usher-stdio.db"
    /// The delivery channel recorded in the state file.
    public static let channel = "stdout"

    /// The embedded store underneath.
    public let database: SQLiteStore
    private let output: any LineSink
    private let input: FileHandle

    /// Opens (or creates) the state file at `path`, then writes any actions committed but not
    /// written before (a crash). `input`: where `takeIn` reads the JSON lines.
    public init(path: String = StdioStore.defaultPath, input: FileHandle = .standardInput,
                output: any LineSink = FileHandleSink.standardOutput, options: SQLiteStore.Options = .init()) async throws {
        database = try await SQLiteStore(path: path, options: options)
        self.input = input
        self.output = output
        do {
            try await flush()
        } catch {
            try? await database.close()
            throw error
        }
    }

    /// Opens `stdio` (state in `usher-stdio.db`) or `stdio:PATH`.
    public static func open(url: String, output: any LineSink = FileHandleSink.standardOutput,
                            options: SQLiteStore.Options = .init()) async throws -> StdioStore {
        try await StdioStore(path: try parse(url: url), output: output, options: options)
    }

    /// `stdio[:STATE.db]` for the `usher` command's registry.
    public static let adapter = StoreAdapter(
        schemes: ["stdio"], form: "stdio[:STATE.db]",
        help: """
        stdio[:STATE.db] — JSON lines in on stdin (docs/store-sqlite.md), actions
        out on stdout, state in the SQLite file (default usher-stdio.db); the
        worker stops when stdin ends
        """
    ) { request in try await open(url: request.url) }

    /// Reads JSON lines from the input until it ends (`StdioIntake`).
    public func takeIn() async throws -> IntakeEnd {
        let summary = try await StdioIntake(store: self).run(input: input)
        return IntakeEnd(event: "stdin-closed", fields: [("lines", "\(summary.lines)"), ("messages", "\(summary.appended)"),
                                                         ("malformed", "\(summary.malformed)")])
    }

    /// The state file a `stdio` URL names.
    public static func parse(url: String) throws -> String {
        if url == "stdio" || url == "stdio:" { return defaultPath }
        guard url.hasPrefix("stdio:") else {
            throw StoreError("bad-url", "'\(url)' is not a stdio store URL; expected stdio or stdio:PATH")
        }
        var path = String(url.dropFirst("stdio:".count))
        if path.hasPrefix("//") { path.removeFirst(2) }
        return path.isEmpty ? defaultPath : path
    }

    /// Writes the actions committed and not yet written; returns how many.
    @discardableResult
    public func flush() async throws -> Int {
        let output = output
        return try await database.deliverActions(channel: Self.channel) { actions in
            try output.write(actions.map(ActionLine.encode))
        }
    }

    // MARK: ChatStore

    public func commit(_ commit: Commit) async throws -> CommitResult {
        let result = try await database.commit(commit)
        if result.isWritten { try await flush() }
        return result
    }

    public func commit(batch: [Commit]) async throws -> [CommitResult] {
        do {
            let results = try await database.commit(batch: batch)
            if results.contains(where: \.isWritten) { try await flush() }
            return results
        } catch {
            // A partly failed batch still committed the others: write them out before failing.
            _ = try? await flush()
            throw error
        }
    }

    public func close() async throws { try await database.close() }
}
