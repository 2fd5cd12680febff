import UsherStore
import Foundation
import UsherEngine

/// Decoded states by bot and conversation, with the JSON text they were decoded from (or encoded
/// to). A hit needs the stored text to be identical, so a state changed by another connection is
/// simply decoded again. Confined to one connection's thread.
struct StateCache {
    private var entries: [Key: (text: [UInt8], state: ConversationState)] = [:]
    private let capacity: Int

    private struct Key: Hashable {
        var bot: String
        var conversation: String
    }

    init(capacity: Int = 8192) { self.capacity = capacity }

    /// The state whose JSON text is `text`, decoding only when the cache does not have it.
    mutating func state(bot: String, conversation: String, text: UnsafeBufferPointer<UInt8>) throws -> ConversationState {
        let key = Key(bot: bot, conversation: conversation)
        if let hit = entries[key], Self.same(hit.text, text) { return hit.state }
        let state = try StateJSON.decode(text)
        remember(key, Array(text), state)
        return state
    }

    /// Byte equality with `memcmp` (the generic `elementsEqual` goes byte by byte).
    private static func same(_ a: [UInt8], _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        a.count == b.count && a.withUnsafeBufferPointer { a in a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
    }

    /// Records the state just written as `text`.
    mutating func wrote(bot: String, conversation: String, text: [UInt8], state: ConversationState) {
        remember(Key(bot: bot, conversation: conversation), text, state)
    }

    private mutating func remember(_ key: Key, _ text: [UInt8], _ state: ConversationState) {
        if entries.count >= capacity, entries[key] == nil { entries.removeAll(keepingCapacity: true) }
        entries[key] = (text, state)
    }
}
