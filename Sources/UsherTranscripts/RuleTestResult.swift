public import Foundation
public import UsherEngine

/// The outcome of one test: passed when no step failed.
public struct RuleTestResult: Sendable {
    /// The test that ran.
    public let test: RuleTest
    /// The file it is in.
    public let file: String
    /// Every failing step, in order. Steps after a failure still run (from the state the bot
    /// actually reached), so one wrong expectation can make later steps fail too: read the first.
    public let failures: [RuleTestFailure]

    /// Whether every step met its expectation.
    public var passed: Bool { failures.isEmpty }
}

/// One customer step whose decision did not meet its `expect`.
public struct RuleTestFailure: Sendable {
    /// The step, with its location in the file.
    public let step: RuleTestStep
    /// 1-based position of the step in the test's `conversation`.
    public let stepNumber: Int
    /// What differed, one entry per expectation key that did not hold.
    public let mismatches: [RuleTestMismatch]
    /// The engine's decision for the step's message, with its trace.
    public let decision: Decision
    /// The conversation's state just before the message.
    public let stateBefore: ConversationState
    /// The virtual clock's time of the message.
    public let time: Date
}

/// One expectation key that did not hold: `rule: expected opening, got refund`.
public struct RuleTestMismatch: Sendable, Hashable, CustomStringConvertible {
    /// The expectation key: `rule`, `reply`, `system`, `handoff`, `tags`, `notify`,
    /// `metadata KEY` or `silent`.
    public let key: String
    /// What the test expects, as written in reports.
    public let expected: String
    /// What the bot did.
    public let actual: String

    /// A mismatch of `key`; `expected` and `actual` as they should read in a report.
    public init(key: String, expected: String, actual: String) {
        self.key = key
        self.expected = expected
        self.actual = actual
    }

    /// `key: expected …, got …`.
    public var description: String { "\(key): expected \(expected), got \(actual)" }
}
