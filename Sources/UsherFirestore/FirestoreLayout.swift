public import Foundation
public import UsherDiagnostics
public import UsherEngine
import UsherYAML

/// Where an app keeps its chat in Firestore, and how it writes it (docs/store-firestore.md).
/// The default is the seed's data model: `conversations/{userId}` with `isAssignedToAgent`,
/// `messageCount`, `userId` and `createdAt`, and a `messages` sub-collection of `senderType`
/// ("customer", "agent", "system"), `content` and `timestamp`. A mapping file
/// (`firestore: 1`) names other collections, fields and values.
public struct FirestoreLayout: Sendable, Equatable {
    /// How a message's time is written.
    public enum TimeFormat: String, Sendable, CaseIterable {
        /// A Firestore timestamp (the SDKs' `Timestamp()`, `FieldValue.serverTimestamp()`).
        case timestamp
        /// A number of seconds since 1970 (a Realtime-Database-style `date`).
        case seconds
        /// A number of milliseconds since 1970 (JavaScript's `Date.now()`).
        case milliseconds
    }

    /// The top-level collection of conversations; each document's id is the conversation's.
    public var conversations = "conversations"
    /// The sub-collection of each conversation document that holds its messages.
    public var messages = "messages"
    /// Conversation fields Usher writes: whether an agent is assigned (true on a handoff), and
    /// the number of customer messages. Nil: not written.
    public var assignedToAgent: String? = "isAssignedToAgent"
    public var customerMessageCount: String? = "messageCount"
    /// Conversation fields Usher reads (and `usher send` writes when it creates a conversation).
    public var customerID: String? = "userId"
    public var createdAt: String? = "createdAt"
    public var channel: String?
    public var locale: String?

    /// Message fields.
    public var senderType = "senderType"
    public var content = "content"
    public var time = "timestamp"
    public var timeFormat = TimeFormat.timestamp
    public var senderID: String?
    public var senderName: String?
    /// A reply's quick replies: an array of maps `{title, url}` (`url` only on a link), on the
    /// replies that have any. Nil: not written.
    public var quickReplies: String? = "quickReplies"

    /// Values of `senderType`. `customer` may be `*`: any value not listed for another role
    /// (an app whose sender field holds the sender's user id). Bot replies are written with
    /// `bot`, system notices with `system`; a value given to both reads back as a notice unless
    /// Usher wrote it (its own messages carry a `usher` map naming what they are).
    public var customerValues = ["customer"]
    public var agentValues = ["agent"]
    public var botValue = "system"
    public var systemValue = "system"
    /// The `senderType` of a close event (the app closed the conversation); nil: none.
    public var closeValue: String? = "close"

    /// The collection of Usher's own documents: per bot, its position, the conversations'
    /// states and leases (`usher/{bot}`, `usher/{bot}/states/{conversation}`,
    /// `usher/{bot}/leases/{conversation}`).
    public var usherCollection = "usher"
    /// How far back (behind the position) messages written late are still answered.
    public var lookback: Duration = .seconds(600)

    /// Where the layout came from (a mapping file's path), for messages.
    public var source: String?

    public init() {}

    /// The seed's data model.
    public static let seed = FirestoreLayout()

    /// The role of a message by its `senderType` value; nil: a close event's value, or a value
    /// of no role (a message Usher does not read).
    func role(of value: String) -> SenderRole? {
        if agentValues.contains(value) { return .agent }
        if customerValues.contains(value) { return .customer }
        if value == botValue { return value == systemValue ? .system : .bot }
        if value == systemValue { return .system }
        if value == closeValue { return nil }
        return customerValues.contains("*") ? .customer : nil
    }

    /// The value written for a role.
    func value(of role: SenderRole) -> String {
        switch role {
        case .customer: customerValues.first { $0 != "*" } ?? "customer"
        case .agent: agentValues.first ?? "agent"
        case .bot: botValue
        case .system: systemValue
        }
    }

    /// The message's time as written in the layout's format.
    func timeValue(_ date: Date) -> FirestoreValue {
        switch timeFormat {
        case .timestamp: .timestamp(FirestoreTime.format(date))
        case .seconds: .double((date.timeIntervalSince1970 * 1_000_000).rounded() / 1_000_000)
        case .milliseconds: .double((date.timeIntervalSince1970 * 1000).rounded())
        }
    }

    func date(_ value: FirestoreValue?) -> Date? { value?.date(millis: timeFormat == .milliseconds) }
}

// MARK: - The mapping file

extension FirestoreLayout {
    static let fileKeys = ["firestore", "usher_collection", "lookback", "conversations", "messages"]
    static let conversationKeys = ["collection", "fields"]
    static let conversationFields = ["assigned_to_agent", "customer_message_count", "customer_id", "created_at", "channel", "locale"]
    static let messageKeys = ["collection", "fields", "sender_values", "time_format"]
    static let messageFields = ["sender_type", "content", "time", "sender_id", "sender_name", "quick_replies"]
    static let senderRoles = ["customer", "agent", "bot", "system", "close"]

    /// Reads and checks a Firestore mapping file: the layout when there are no errors, and every
    /// diagnostic (file, line, column, what to do), as `usher check` prints them.
    public static func load(path: String) -> (FirestoreLayout?, [Diagnostic]) {
        let r = read(path: path)
        return (r.layout, r.diagnostics)
    }

    /// `load(path:)`, with the file's text for quoting the diagnostics (`usher check`).
    public static func read(path: String) -> (layout: FirestoreLayout?, diagnostics: [Diagnostic], source: SourceText?) {
        let (document, loaded) = YAMLLoader.loadFile(path: path)
        let (layout, diagnostics) = check(document, loaded)
        return (layout, diagnostics, document?.source)
    }

    /// What `usher check` says of a layout that loaded.
    public var summary: String {
        "messages in \(conversations)/*/\(messages) (\(senderType), \(content), \(time) as \(timeFormat.rawValue)), "
            + "Usher's documents in \(usherCollection), look-back \(Int(lookback.seconds))s"
    }

    /// Checks a mapping file's text, as if read from `path`.
    public static func parse(path: String, text: String) -> (FirestoreLayout?, [Diagnostic]) {
        let (document, loaded) = YAMLLoader.load(path: path, text: text)
        return check(document, loaded)
    }

    /// Whether `path` is a Firestore mapping file: a YAML file whose top level has `firestore`.
    public static func isMappingFile(path: String) -> Bool {
        let (document, _) = YAMLLoader.loadFile(path: path)
        return document?.root?.mapping?.contains { $0.key.scalar == "firestore" } ?? false
    }

    private static func check(_ document: YAMLDocument?, _ loaded: [Diagnostic]) -> (FirestoreLayout?, [Diagnostic]) {
        guard let document, let root = document.root, !loaded.hasErrors else { return (nil, loaded) }
        let reader = NodeReader(document: document)
        var layout = FirestoreLayout()
        layout.source = document.path
        layout.read(root, reader)
        let all = loaded + reader.diagnostics
        return (all.hasErrors ? nil : layout, all)
    }

    private mutating func read(_ root: YAMLNode, _ r: NodeReader) {
        guard let top = r.mapping(root, "the Firestore mapping file", allowed: Self.fileKeys) else { return }
        if let v = r.require(top["firestore"], "firestore", in: root, "the Firestore mapping file", example: "firestore: 1"),
           let s = r.text(v, "'firestore'"), s != "1" {
            r.error("unsupported-version", "this Usher understands Firestore mapping files of version 1, found '\(s)'; write 'firestore: 1'", at: v)
        }
        if let v = top["usher_collection"], let s = Self.name(v, "usher_collection", r) { usherCollection = s }
        if let v = top["lookback"], let seconds = r.duration(v, "'lookback'") {
            if seconds < 0 || seconds > 86_400 {
                r.error("out-of-range", "'lookback' must be between 0s and 1d, found \(Int(seconds))s", at: v)
            } else {
                lookback = .milliseconds(Int64(seconds * 1000))
            }
        }
        if let node = top["conversations"], let m = r.mapping(node, "'conversations'", allowed: Self.conversationKeys) {
            if let v = m["collection"], let s = Self.name(v, "conversations.collection", r) { conversations = s }
            if let v = m["fields"], let f = Self.fields(v, "conversations.fields", Self.conversationFields, r) {
                func set(_ key: String, _ path: WritableKeyPath<FirestoreLayout, String?>) {
                    if let value = f[key] { self[keyPath: path] = value == "" ? nil : value }
                }
                set("assigned_to_agent", \.assignedToAgent)
                set("customer_message_count", \.customerMessageCount)
                set("customer_id", \.customerID)
                set("created_at", \.createdAt)
                set("channel", \.channel)
                set("locale", \.locale)
            }
        }
        if let node = top["messages"], let m = r.mapping(node, "'messages'", allowed: Self.messageKeys) {
            if let v = m["collection"], let s = Self.name(v, "messages.collection", r) { messages = s }
            if let v = m["fields"], let f = Self.fields(v, "messages.fields", Self.messageFields, r) {
                if let s = f["sender_type"], s != "" { senderType = s }
                if let s = f["content"], s != "" { content = s }
                if let s = f["time"], s != "" { time = s }
                if let s = f["sender_id"] { senderID = s == "" ? nil : s }
                if let s = f["sender_name"] { senderName = s == "" ? nil : s }
                if let s = f["quick_replies"] { quickReplies = s == "" ? nil : s }
            }
            if let v = m["time_format"], let s = r.text(v, "'messages.time_format'") {
                if let t = TimeFormat(rawValue: s) { timeFormat = t } else {
                    r.error("invalid-value", "'\(s)' is not a time format; write one of: \(TimeFormat.allCases.map(\.rawValue).joined(separator: ", "))", at: v)
                }
            }
            if let v = m["sender_values"] { senderValues(v, r) }
        }
        if messages == usherCollection || conversations == usherCollection, let node = top["usher_collection"] ?? top["messages"] {
            r.error("same-collection", "Usher's own collection '\(usherCollection)' is also the app's; name another 'usher_collection'", at: node)
        }
    }

    private mutating func senderValues(_ node: YAMLNode, _ r: NodeReader) {
        guard let m = r.mapping(node, "'messages.sender_values'", allowed: Self.senderRoles) else { return }
        var seen: [String: (role: String, node: YAMLNode)] = [:]
        func note(_ value: String, _ role: String, _ at: YAMLNode) {
            // A notice and a reply may share a value (the seed writes both as "system").
            if let first = seen[value], !(Set([first.role, role]) == ["bot", "system"]) {
                r.error("duplicate-value", "'\(value)' stands for '\(first.role)' already; each role needs values of its own",
                        at: at, notes: [.init("'\(first.role)' has it here", at: first.node.location)])
            } else if seen[value] == nil {
                seen[value] = (role, at)
            }
        }
        for role in Self.senderRoles {
            guard let v = m[role] else { continue }
            switch role {
            case "customer", "agent":
                guard let items = r.texts(v, "'messages.sender_values.\(role)'") else { continue }
                for (value, at) in items {
                    if value == "*" && role != "customer" {
                        r.error("invalid-value", "'*' (any other value) can stand for customers only", at: at)
                    } else {
                        note(value, role, at)
                    }
                }
                if role == "customer" { customerValues = items.map(\.0) } else { agentValues = items.map(\.0) }
            default:
                guard let value = r.text(v, "'messages.sender_values.\(role)'") else { continue }
                note(value, role, v)
                switch role {
                case "bot": botValue = value
                case "system": systemValue = value
                default: closeValue = value
                }
            }
        }
    }

    /// `fields:`: setting → field name (`''` or `null`: not used).
    private static func fields(_ node: YAMLNode, _ path: String, _ allowed: [String], _ r: NodeReader) -> [String: String]? {
        guard let m = r.mapping(node, "'\(path)'", allowed: allowed) else { return nil }
        var out: [String: String] = [:]
        for (key, v) in m {
            if v.isNull && v.tag == nil { out[key] = ""; continue }
            guard let s = Self.name(v, path + "." + key, r) else { continue }
            out[key] = s
        }
        return out
    }

    /// A collection or field name: letters, digits and `_`, not starting with a digit (names that
    /// need back-quoting in field paths are not supported).
    private static func name(_ node: YAMLNode, _ path: String, _ r: NodeReader) -> String? {
        guard let s = r.text(node, "'\(path)'") else { return nil }
        let ok = !s.isEmpty && s.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x5f
        } && !(s.utf8.first! >= 0x30 && s.utf8.first! <= 0x39) && !s.hasPrefix("__")
        guard ok else {
            r.error("invalid-name", "'\(s)' is not a name Usher can use for '\(path)'; use letters, digits and '_', not starting with a digit or '__'", at: node)
            return nil
        }
        return s
    }
}
