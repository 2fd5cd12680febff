public import UsherDiagnostics
import UsherSQLMapping
import UsherStore

extension PGLayout {
    /// The layout a mapping file describes; `SQLMapping.native` gives the native schema.
    init(_ m: SQLMapping) {
        func q(_ s: String) -> String { PGText.identifier(s) }
        func q(_ s: String?) -> String? { s.map(PGText.identifier) }
        let c = m.conversations, g = m.messages
        // The native tables, whatever the intake or the schema of Usher's own tables.
        let isNative = m.conversations == SQLMapping.native.conversations && m.messages == SQLMapping.native.messages
        self.init(
            conversations: q(c.table), cID: q(c.id), cCustomerID: q(c.customerID), cChannel: q(c.channel),
            cLocale: q(c.locale), cOwner: q(c.owner), cAssigned: q(c.assignedToAgent), cCount: q(c.customerMessageCount),
            cTags: q(c.tags), cMetadata: q(c.metadata), cCreatedAt: q(c.createdAt), cUpdatedAt: q(c.updatedAt),
            ownerValues: ["bot": c.ownerValues.bot, "waiting": c.ownerValues.waiting, "agent": c.ownerValues.agent],
            agentOwned: c.ownership?.agent, waitingOwned: c.ownership?.waiting,
            handoffWrites: (c.ownership?.handoff ?? []).map { (q($0.column), $0.value) },
            conversationTypes: isNative ? PGLayout.nativeConversationTypes : [:],
            messages: q(g.table), mSeq: q(g.seq), mID: q(g.id), mConversation: q(g.conversationID), mKind: q(g.kind),
            mSender: q(g.senderType), mSenderID: q(g.senderID), mSenderName: q(g.senderName), mContent: q(g.content),
            mCreatedAt: q(g.createdAt), mRuleID: q(g.ruleID), mKey: q(g.idempotencyKey), mQuickReplies: q(g.quickReplies),
            customerValues: g.senderValues.customer, agentValues: g.senderValues.agent,
            botValue: g.senderValues.bot, systemValue: g.senderValues.system,
            kindMessage: g.kindValues.message, kindClose: g.kindValues.close,
            time: g.time, messageWrites: g.write.map { (q($0.column), $0.value) }, messageFilter: g.filter,
            messageTypes: isNative ? PGLayout.nativeMessageTypes : [:],
            usher: q(m.usherSchema), trigger: m.intake == .trigger, pollInterval: m.pollInterval, isNative: isNative)
    }
}

extension PostgresStore {
    /// The mapping file names tables or columns the database does not have.
    public struct MappingMismatch: Error, CustomStringConvertible {
        public var diagnostics: [Diagnostic]
        public var description: String { diagnostics.map(\.headline).joined(separator: "\n") }
    }
}
