import Foundation
import Testing
import UsherDiagnostics
import UsherEngine
import UsherRules
import UsherTranscripts

/// The checked-in bots' rule tests, run the way `usher test` runs them.
@Suite("Rule tests: the checked-in bots")
struct RuleTestBotsTests {
    /// Loads a bot under bots/ and every test file of it.
    static func load(_ bot: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> (RuleSet, [RuleTestSuite]) {
        let folder = repositoryRoot.appendingPathComponent("bots/\(bot)")
        let loaded = RuleSetLoader.loadBot(at: folder.path)
        let ruleSet = try #require(loaded.ruleSet, "\(loaded.diagnostics.map(\.headline))", sourceLocation: sourceLocation)
        let testsFolder = folder.appendingPathComponent("tests")
        let files = try FileManager.default.contentsOfDirectory(atPath: testsFolder.path).filter { $0.hasSuffix(".yaml") }.sorted()
        #expect(!files.isEmpty, sourceLocation: sourceLocation)
        var suites: [RuleTestSuite] = []
        for file in files {
            let result = RuleTestSuite.load(path: testsFolder.appendingPathComponent(file).path, bot: ruleSet)
            #expect(result.diagnostics.isEmpty, "\(result.diagnostics.map(\.headline))", sourceLocation: sourceLocation)
            if let suite = result.suite { suites.append(suite) }
        }
        return (ruleSet, suites)
    }

    @Test(arguments: ["support", "tienda"])
    func everyTestPasses(_ bot: String) throws {
        let (ruleSet, suites) = try Self.load(bot)
        let results = suites.flatMap { RuleTestRunner.run($0, ruleSet: ruleSet) }
        #expect(!results.isEmpty)
        for result in results where !result.passed {
            Issue.record("\(result.file): \(result.test.name): \(result.failures.map { "step \($0.stepNumber): \($0.mismatches)" })")
        }
    }

    /// Rule tests decide with a trace, the worker without one (and with candidate selection):
    /// every step of every test must come out the same both ways, or the tests would not test
    /// what the worker does.
    @Test(arguments: ["support", "tienda"])
    func tracedAndUntracedDecisionsAgree(_ bot: String) throws {
        let (ruleSet, suites) = try Self.load(bot)
        var decided = 0
        for suite in suites {
            for test in suite.tests {
                var state = ConversationState(conversationID: test.conversationID, channel: test.channel, locale: test.locale,
                                              customerName: test.customerName, customerID: RuleTestRunner.customerID)
                state.tags = test.tags.sorted()
                var now = test.start
                for step in test.steps {
                    let message: Message
                    switch step.action {
                    case let .wait(seconds): now += seconds; continue
                    case .close: state = Engine.closeSession(state); continue
                    case let .customer(text):
                        message = Message(id: "m", conversationID: test.conversationID, from: .customer,
                                          senderID: RuleTestRunner.customerID, senderName: test.customerName, text: text, at: now)
                    case let .agent(text):
                        message = Message(id: "m", conversationID: test.conversationID, from: .agent,
                                          senderID: RuleTestRunner.agentID, text: text, at: now)
                    }
                    let traced = Engine.decide(ruleSet, state, message, now: now, options: .init(trace: true))
                    let fast = Engine.decide(ruleSet, state, message, now: now, options: .init(trace: false))
                    #expect(traced.effects == fast.effects, "\(test.name), \(step.location)")
                    #expect(traced.state == fast.state, "\(test.name), \(step.location)")
                    #expect(traced.outcome == fast.outcome, "\(test.name), \(step.location)")
                    state = traced.state
                    now += 1
                    decided += 1
                }
            }
        }
        #expect(decided > 10)
    }

    /// Every rule of bots/support, its own and the shared packs', is expected to fire by at
    /// least one step of its tests (`expect: {rule: …}`).
    @Test func everySupportRuleIsCovered() throws {
        let (ruleSet, suites) = try Self.load("support")
        let expected = suites.reduce(into: Set<String>()) { $0.formUnion($1.expectedRuleIDs) }
        let never = ruleSet.rules.map(\.id).filter { !expected.contains($0) }
        #expect(never.isEmpty, "rules no test expects to fire: \(never)")
        #expect(ruleSet.rules.count >= 18)
        // Coverage of a rule must also mean that it really fired in that step: the tests pass.
        let results = suites.flatMap { RuleTestRunner.run($0, ruleSet: ruleSet) }
        #expect(results.allSatisfy { $0.passed })
    }
}
