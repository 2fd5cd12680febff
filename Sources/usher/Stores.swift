import UsherFirestore
import UsherPostgres
import UsherSQLite
import UsherStdio
import UsherStore
import UsherWebhook

/// The stores `--store URL` opens: one line per adapter. An adapter is a target that declares a
/// `StoreAdapter` (its schemes, help and opener); listing it here is all the wiring it needs —
/// `usher run|send|chat|inbox --help` and the "unknown store" message are made from this list.
enum Stores {
    static let adapters: [StoreAdapter] = [
        SQLiteStore.adapter,
        PostgresStore.adapter,
        StdioStore.adapter,
        FirestoreStore.adapter,
        WebhookStore.adapter,
        ChatwootAgentBot.adapter,
    ]

    static let `default` = "sqlite:usher.db"

    /// The command-line options the adapters read (`--mapping`), for `Arguments`.
    static var optionNames: Set<String> { Set(adapters.flatMap { $0.options.map(\.name) }) }

    /// The `--store` and adapter options' lines of a command's `--help`, their text starting
    /// at `column` like the command's other options.
    static func help(column: Int) -> String {
        func indented(_ text: String) -> String {
            text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { String(repeating: " ", count: column) + $0.trimmingPrefix(while: { $0 == " " }) }
                .joined(separator: "\n")
        }
        var lines = ["  " + "--store URL".padding(column - 2) + "where the messages are (default \(`default`)):"]
        lines += adapters.map { indented($0.help) }
        var listed = Set<String>()
        for adapter in adapters {
            // An option several adapters share word for word (the webhook's and Chatwoot's) once.
            for option in adapter.options where listed.insert("\(option.name) \(option.value) \(option.help)").inserted {
                lines.append("  " + "\(option.name) \(option.value)".padding(column - 2) + indented(option.help).dropFirst(column))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Opens the store `url` names with the adapter whose scheme it has. A usage error for a
    /// URL no adapter opens, or an adapter's option given with another store; a failure (exit 1)
    /// when the store cannot be opened, exit 69 when its server is not up yet.
    /// `mustExist`: the command only reads (see `StoreRequest.mustExist`); `worker`: `usher run`
    /// (see `StoreRequest.worker`); `start`: `usher run --from` (a usage error for a store
    /// without history, `StoreAdapter.readsHistory`).
    static func open(_ url: String, _ arguments: Arguments, mustExist: Bool = false, worker: Bool = false,
                     start: StartPosition? = nil,
                     warn: (@Sendable (String, [(String, String)]) -> Void)? = nil) throws(UsageError) -> any ChatStore {
        guard let adapter = adapters.first(where: { $0.opens(url) }) else {
            throw UsageError("unknown store '\(StoreURL.redacted(url))'; use " + adapters.map(\.form).joined(separator: ", "))
        }
        if start != nil, !adapter.readsHistory {
            throw UsageError("--from applies to stores over an application's existing data ("
                             + adapters.filter(\.readsHistory).map(\.form).joined(separator: ", ")
                             + "); \(adapter.form) holds only the messages written for Usher, and it answers every one")
        }
        var options: [String: String] = [:]
        for other in adapters {
            // An option several adapters read (`--mapping`) is the opened adapter's own.
            for option in other.options where other.schemes == adapter.schemes || !adapter.options.contains(where: { $0.name == option.name }) {
                guard let value = arguments.value(option.name) else { continue }
                guard other.schemes == adapter.schemes else {
                    let forms = adapters.filter { $0.options.contains { $0.name == option.name } }.map(\.form)
                    throw UsageError("\(option.name) applies to \(forms.joined(separator: " and ")) stores only")
                }
                options[option.name] = value
            }
        }
        let request = StoreRequest(url: url, options: options, mustExist: mustExist, worker: worker, warn: warn, start: start)
        let opened = awaiting { try await adapter.open(request) }
        switch opened {
        case .success(let store):
            return store
        case .failure(let error):
            let store = error as? StoreError
            // The store's own message may quote the URL (SQLite's, naming an unknown option).
            let why = (store?.message ?? "\(error)").replacingOccurrences(of: url, with: StoreURL.redacted(url))
            throw UsageError.failure("cannot open \(StoreURL.redacted(url)): \(why)",
                                     status: store?.isUnavailable == true ? .unavailable : .failure)
        }
    }

    /// A command's store when the command needs what only some stores do (`usher send` writes
    /// messages as a backend would): a clear failure for a store that cannot.
    static func backend(_ store: any ChatStore, url: String, for command: String) throws(UsageError) -> any BackendStore {
        guard let backend = store as? any BackendStore else {
            _ = blocking(closing: store) { .ok }
            throw UsageError.failure("\(StoreURL.redacted(url)) does not support usher \(command): its messages are written "
                                     + "by the backend it serves, not through Usher; use the backend's own tools")
        }
        return backend
    }
}
