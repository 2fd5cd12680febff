public import Foundation
public import UsherStore
import UsherEngine

/// `usher send`, `usher chat` and `usher inbox` on Firestore: messages written as the seed's
/// app writes them, read back in order; the inbox from Usher's state documents.
extension FirestoreStore {
    /// Writes the message as the app would — creating the conversation document first if there
    /// is none (`userId`, `isAssignedToAgent: false`, `messageCount: 0`, `createdAt`) — with the
    /// message id as its document id, so the same id again returns the message stored.
    @discardableResult
    public func append(_ message: NewMessage) async throws -> StoredMessage {
        let conversation = Self.documentID(message.conversationID)
        var conv: [String: FirestoreValue] = [:]
        if let f = layout.customerID { conv[f] = .string(message.from == .customer ? message.senderID ?? conversation : conversation) }
        if let f = layout.assignedToAgent { conv[f] = .bool(false) }
        if let f = layout.customerMessageCount { conv[f] = .integer(0) }
        if let f = layout.createdAt { conv[f] = .timestamp(FirestoreTime.format(message.at)) }
        if let f = layout.channel, let v = message.channel { conv[f] = .string(v) }
        if let f = layout.locale, let v = message.locale { conv[f] = .string(v) }
        var fields: [String: FirestoreValue] = [
            layout.senderType: .string(message.kind == .close ? layout.closeValue ?? "close" : layout.value(of: message.from)),
            layout.content: .string(message.text),
            layout.time: layout.timeValue(message.at),
        ]
        // A layout whose role field is its sender field (`senderId`): a customer's own id says it.
        if let f = layout.senderID, let v = message.senderID, f != layout.senderType || message.from == .customer { fields[f] = .string(v) }
        if let f = layout.senderName, let v = message.senderName { fields[f] = .string(v) }
        let name = rest.name(messagesParent(conversation) + "/" + layout.messages + "/" + Self.documentID(message.id))
        // Each on its own: the conversation usually exists already, and that must not stop the message.
        _ = try await call { try await self.rest.batchWrite([.create(self.rest.name(self.conversationPath(conversation)), conv),
                                                             .create(name, fields)]) }
        guard let doc = try await call({ try await self.rest.batchGet([name]) })[0], let (stored, _) = self.message(doc) else {
            throw StoreError("append-failed", "the message \(rest.path(name)) was not written")
        }
        return stored
    }

    public func transcript(conversation: String) async throws -> [StoredMessage] {
        var q = FirestoreQuery(parent: messagesParent(Self.documentID(conversation)), collection: layout.messages)
        q.orderBy = [layout.time, "__name__"]
        var out: [(StoredMessage, Position)] = []
        while true {
            q.limit = 1000
            let page = try await call { try await self.rest.runQuery(q) }
            out += page.compactMap { self.message($0) }
            guard page.count == 1000, let last = page.last, let t = last.fields[layout.time] else { break }
            q.startAfter = [t, .reference(last.name)]
        }
        // Messages of one instant in the order they were written.
        return out.sorted { $0.1.arrivedBefore($1.1) }.map(\.0)
    }

    /// Conversations handed off and not yet answered by an agent, oldest handoff first: Usher's
    /// state documents whose owner is `waiting` (the seed's agent dashboard asks the same of
    /// `isAssignedToAgent`).
    public func inbox(bot: String) async throws -> [InboxEntry] {
        var q = FirestoreQuery(parent: botPath(bot), collection: "states")
        q.filters = [("owner", .equal, .string(Owner.waiting.rawValue))]
        let docs = try await call { try await self.rest.runQuery(q) }
        return docs.map { d in
            InboxEntry(conversationID: d.fields["conversation"]?.string ?? d.id, customerName: d.fields["customerName"]?.string,
                       queue: d.fields["queue"]?.string, reason: d.fields["reason"]?.string,
                       waitingSince: d.fields["waitingSince"]?.date() ?? .distantPast, lastMessage: d.fields["lastMessage"]?.string)
        }.sorted { ($0.waitingSince, $0.conversationID) < ($1.waitingSince, $1.conversationID) }
    }

    public func conversation(_ id: String) async throws -> ConversationInfo? {
        guard let doc = try await call({ try await self.rest.batchGet([self.rest.name(self.conversationPath(Self.documentID(id)))]) })[0] else {
            return nil
        }
        let created = layout.createdAt.flatMap { doc.fields[$0]?.date() } ?? FirestoreTime.parse(doc.createTime) ?? Date()
        return ConversationInfo(id: id, customerID: layout.customerID.flatMap { doc.fields[$0]?.string },
                                channel: layout.channel.flatMap { doc.fields[$0]?.string },
                                locale: layout.locale.flatMap { doc.fields[$0]?.string }, createdAt: created)
    }
}
