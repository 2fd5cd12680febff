import Foundation
package import UsherEngine
package import UsherJSON

/// `ConversationState` as JSON text, in exactly the shape its synthesized `Codable` conformance
/// gives with a default `JSONEncoder` (same keys, dates as seconds since the reference date), so
/// either side can read what the other wrote — written and read by hand, because `JSONEncoder`
/// and `JSONDecoder` cost ≈ 20 µs each per state here, more than the whole SQLite transaction.
///
/// Reading falls back to `JSONDecoder` on anything it does not expect (an unknown key from a
/// newer build, a missing key, another number format), so it is never less able than Codable.
/// `StateJSONTests` fails when `ConversationState` gains a stored property this file does not
/// know yet.
package enum StateJSON {
    /// The stored properties written, by their Codable key.
    static var keys: Set<String> { Set(keyTable.names) }

    package static func encode(_ s: ConversationState, into w: inout JSONWriter) {
        w.byte(UInt8(ascii: "{"))
        w.key("conversationID", first: true); w.string(s.conversationID)
        w.key("owner"); w.string(s.owner.rawValue)
        w.key("session"); w.int(s.session)
        if let d = s.sessionStartedAt { w.key("sessionStartedAt"); w.double(d.timeIntervalSinceReferenceDate) }
        if let d = s.lastActivityAt { w.key("lastActivityAt"); w.double(d.timeIntervalSinceReferenceDate) }
        w.key("customerMessages"); w.int(s.customerMessages)
        w.key("botReplies"); w.int(s.botReplies)
        w.key("fallbacksInARow"); w.int(s.fallbacksInARow)
        w.key("marks"); w.byte(UInt8(ascii: "["))
        for (i, m) in s.marks.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.byte(UInt8(ascii: "{"))
            w.key("rule", first: true); w.string(m.rule)
            w.key("firesThisSession"); w.int(m.firesThisSession)
            w.key("lastFiredAt"); w.double(m.lastFiredAt.timeIntervalSinceReferenceDate)
            w.byte(UInt8(ascii: "}"))
        }
        w.byte(UInt8(ascii: "]"))
        w.key("recentReplies"); w.byte(UInt8(ascii: "["))
        for (i, d) in s.recentReplies.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.double(d.timeIntervalSinceReferenceDate)
        }
        w.byte(UInt8(ascii: "]"))
        w.key("tags"); w.stringArray(s.tags)
        w.key("metadata"); w.stringMap(s.metadata)
        if let v = s.channel { w.key("channel"); w.string(v) }
        if let v = s.locale { w.key("locale"); w.string(v) }
        if let v = s.customerName { w.key("customerName"); w.string(v) }
        if let v = s.customerID { w.key("customerID"); w.string(v) }
        if let v = s.language { w.key("language"); w.string(v) }
        w.key("version"); w.int(s.version)
        w.byte(UInt8(ascii: "}"))
    }

    package static func encode(_ s: ConversationState) -> String {
        var w = JSONWriter()
        encode(s, into: &w)
        return w.text
    }

    /// Reads a state; throws `StoreError` only when `JSONDecoder` cannot read it either.
    package static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws -> ConversationState {
        if let s = try? fastDecode(bytes) { return s }
        do {
            return try JSONDecoder().decode(ConversationState.self, from: Data(buffer: bytes))
        } catch {
            throw StoreError("bad-state", "a stored conversation state cannot be read: \(error)")
        }
    }

    package static func decode(_ text: String) throws -> ConversationState {
        var text = text
        return try text.withUTF8 { try decode($0) }
    }

    /// The keys, in the order of `Key`.
    private enum Key: Int, CaseIterable {
        case conversationID, owner, session, sessionStartedAt, lastActivityAt, customerMessages, botReplies
        case fallbacksInARow, marks, recentReplies, tags, metadata, channel, locale, customerName, customerID, language, version
    }

    private static let keyTable = JSONKeys(Key.allCases.map { k in
        switch k {
        case .conversationID: "conversationID"
        case .owner: "owner"
        case .session: "session"
        case .sessionStartedAt: "sessionStartedAt"
        case .lastActivityAt: "lastActivityAt"
        case .customerMessages: "customerMessages"
        case .botReplies: "botReplies"
        case .fallbacksInARow: "fallbacksInARow"
        case .marks: "marks"
        case .recentReplies: "recentReplies"
        case .tags: "tags"
        case .metadata: "metadata"
        case .channel: "channel"
        case .locale: "locale"
        case .customerName: "customerName"
        case .customerID: "customerID"
        case .language: "language"
        case .version: "version"
        }
    })

    private static let markKeys = JSONKeys(["rule", "firesThisSession", "lastFiredAt"])

    /// Keys `ConversationState`'s synthesized `Decodable` requires (the non-optional properties).
    private static let requiredMask: Int = [Key.conversationID, .owner, .session, .customerMessages, .botReplies,
                                            .fallbacksInARow, .marks, .recentReplies, .tags, .metadata, .version]
        .reduce(0) { $0 | 1 << $1.rawValue }

    package static func fastDecode(_ bytes: UnsafeBufferPointer<UInt8>) throws -> ConversationState {
        var r = JSONReader(bytes)
        var s = ConversationState(conversationID: "")
        var seen = 0
        var duplicateRule = false
        try r.object(keys: keyTable) { r, index in
            guard let index, let key = Key(rawValue: index) else { throw JSONError("a key not known to this build", at: r.offset) }
            guard seen & (1 << index) == 0 else { throw JSONError("a key twice", at: r.offset) }
            seen |= 1 << index
            switch key {
            case .conversationID: s.conversationID = try r.string()
            case .owner:
                guard let o = Owner(rawValue: try r.string()) else { throw JSONError("an unknown owner", at: r.offset) }
                s.owner = o
            case .session: s.session = try r.int()
            case .sessionStartedAt:
                s.sessionStartedAt = try r.null() ? nil : Date(timeIntervalSinceReferenceDate: try r.double())
            case .lastActivityAt:
                s.lastActivityAt = try r.null() ? nil : Date(timeIntervalSinceReferenceDate: try r.double())
            case .customerMessages: s.customerMessages = try r.int()
            case .botReplies: s.botReplies = try r.int()
            case .fallbacksInARow: s.fallbacksInARow = try r.int()
            case .marks:
                try r.array { r in
                    var rule: String?
                    var fires: Int?
                    var last: Double?
                    try r.object(keys: markKeys) { r, k in
                        switch k {
                        case 0: rule = try r.string()
                        case 1: fires = try r.int()
                        case 2: last = try r.double()
                        default: throw JSONError("a key not known to this build", at: r.offset)
                        }
                    }
                    guard let rule, let fires, let last else { throw JSONError("a rule mark without all its keys", at: r.offset) }
                    if s.marks.contains(where: { $0.rule == rule }) { duplicateRule = true }
                    // RuleMark has no public initializer: recordFire appends one.
                    s.recordFire(of: rule, at: Date(timeIntervalSinceReferenceDate: last))
                    s.marks[s.marks.count - 1].firesThisSession = fires
                }
            case .recentReplies:
                try r.array { r in s.recentReplies.append(Date(timeIntervalSinceReferenceDate: try r.double())) }
            case .tags: s.tags = try r.stringArray()
            case .metadata: s.metadata = try r.stringMap()
            case .channel: s.channel = try r.null() ? nil : try r.string()
            case .locale: s.locale = try r.null() ? nil : try r.string()
            case .customerName: s.customerName = try r.null() ? nil : try r.string()
            case .customerID: s.customerID = try r.null() ? nil : try r.string()
            case .language: s.language = try r.null() ? nil : try r.string()
            case .version: s.version = try r.int()
            }
        }
        try r.end()
        guard seen & requiredMask == requiredMask, !duplicateRule else {
            throw JSONError("a required key missing, or a rule marked twice", at: r.offset)
        }
        return s
    }
}
