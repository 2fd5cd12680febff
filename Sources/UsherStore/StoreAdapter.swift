public import Foundation

/// An adapter as the `usher` command sees it: the URL schemes it opens, its help, and how it
/// opens a store. Each adapter target declares one (`SQLiteStore.adapter`, …); the command lists
/// them once, in `Sources/usher/Stores.swift`, and `--store` and every `--help` come from there.
public struct StoreAdapter: Sendable {
    /// The URL schemes this adapter opens, without the ':' (`sqlite`, `postgres`, `stdio`). A URL
    /// is this adapter's when it is a scheme alone or starts with one and ':'.
    public var schemes: [String]
    /// The URL as a user writes it, for the one-line list (`sqlite:PATH`).
    public var form: String
    /// What the URL names and its parameters: a few lines for the commands' `--help`.
    public var help: String
    /// Command-line options this adapter reads beyond `--store` (`--mapping`), with their help.
    public var options: [Option]
    /// Opens the store. Errors are `StoreError`s: `isUnavailable` when the server is not up yet
    /// (`usher run` waits for it), a message that says what to do otherwise.
    public var open: @Sendable (StoreRequest) async throws -> any ChatStore
    /// Whether the store can hold messages written before Usher came (an application's own
    /// tables or documents), so that `usher run --from` (`StoreRequest.start`) says where a bot
    /// starts. A store that holds only what was written for Usher (its own schema, a webhook's
    /// queue) has no such history: `--from` is refused for it.
    public var readsHistory: Bool

    public init(schemes: [String], form: String, help: String, options: [Option] = [], readsHistory: Bool = false,
                open: @escaping @Sendable (StoreRequest) async throws -> any ChatStore) {
        self.schemes = schemes
        self.form = form
        self.help = help
        self.options = options
        self.readsHistory = readsHistory
        self.open = open
    }

    /// A command-line option an adapter reads.
    public struct Option: Sendable {
        /// `--mapping`
        public var name: String
        /// `FILE`
        public var value: String
        public var help: String
        public init(_ name: String, _ value: String, help: String) {
            self.name = name
            self.value = value
            self.help = help
        }
    }

    /// Whether `url` names a store of this adapter.
    public func opens(_ url: String) -> Bool {
        schemes.contains { url == $0 || url.hasPrefix($0 + ":") }
    }
}

/// What a command asks an adapter to open.
public struct StoreRequest: Sendable {
    /// The `--store` URL as given (secrets included: never print it).
    public var url: String
    /// The values of the adapter's own options given on the command line, by name (`--mapping`).
    public var options: [String: String]
    /// The command only reads (`usher inbox`): a store that does not exist yet is an error, not
    /// created empty at a mistyped path.
    public var mustExist: Bool
    /// The store is opened to run a worker (`usher run`): a store that coordinates workers
    /// (Firestore's lease documents) takes part only then, so that `usher send --wait` reading
    /// what is pending claims nothing.
    public var worker: Bool
    /// Where the store's own warnings go (a database server's notices): an event and its
    /// fields, for the worker's log. Nil: dropped.
    public var warn: (@Sendable (String, [(String, String)]) -> Void)?
    /// Where a bot with no position yet starts in a store over existing data (`usher run
    /// --from`); nil: not given, the store's default (`StartPosition.now`).
    public var start: StartPosition?

    public init(url: String, options: [String: String] = [:], mustExist: Bool = false, worker: Bool = false,
                warn: (@Sendable (String, [(String, String)]) -> Void)? = nil, start: StartPosition? = nil) {
        self.url = url
        self.options = options
        self.mustExist = mustExist
        self.worker = worker
        self.warn = warn
        self.start = start
    }
}

/// Where a bot starts the first time it runs on a store that already holds messages — an
/// application's tables or documents with their history (`StoreAdapter.readsHistory`). Once a
/// bot has a position it goes on from there.
public enum StartPosition: Sendable, Hashable, CustomStringConvertible {
    /// After every message there when the worker opens the store: nothing old is answered.
    case now
    /// From the first message: the whole history is answered.
    case beginning
    /// From the first message written at or after this time.
    case time(Date)

    /// `now`, `beginning`, a date (`2026-12-01`, midnight UTC) or a date and time with its
    /// offset (`2026-12-01T09:30:00+08:00`, `2026-12-01T01:30:00Z`); nil for anything else.
    public init?(_ text: String) {
        switch text {
        case "now": self = .now
        case "beginning": self = .beginning
        default:
            let full = ISO8601DateFormatter()
            let fractional = ISO8601DateFormatter()
            fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let day = ISO8601DateFormatter()
            day.formatOptions = [.withFullDate]
            guard let date = full.date(from: text) ?? fractional.date(from: text)
                    ?? (text.count == 10 ? day.date(from: text) : nil) else { return nil }
            self = .time(date)
        }
    }

    public var description: String {
        switch self {
        case .now: "now"
        case .beginning: "beginning"
        case let .time(date): ISO8601DateFormatter().string(from: date)
        }
    }
}

/// A store whose inbound messages come in through the worker's own process (JSON lines on
/// stdin, an HTTP listener) rather than from a backend writing to a database: `usher run` runs
/// `takeIn` beside the worker.
public protocol IntakeStore: ChatStore {
    /// Takes messages in until the input ends (an input that never ends: until cancelled).
    /// When it returns, the worker finishes what was taken in and stops; the result is logged.
    func takeIn() async throws -> IntakeEnd
}

/// How an `IntakeStore`'s input ended, for the worker's log.
public struct IntakeEnd: Sendable {
    /// The log event (`stdin-closed`).
    public var event: String
    /// Its fields, in order.
    public var fields: [(String, String)]
    public init(event: String, fields: [(String, String)]) {
        self.event = event
        self.fields = fields
    }
}
