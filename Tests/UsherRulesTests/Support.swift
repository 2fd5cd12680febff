import Testing
import UsherDiagnostics
import UsherRules

/// Loads a bot from in-memory files: `b/bot.yaml` and `b/rules.yaml`.
func load(rules: String, bot: String? = nil) -> LoadResult {
    let botText = bot ?? """
    bot: test
    timezone: Asia/Shanghai
    rules: [rules.yaml]
    schedules:
      business_hours:
        mon-fri: "09:00-18:00"

    """
    return RuleSetLoader.loadBot(botPath: "b/bot.yaml", files: ["b/bot.yaml": botText, "b/rules.yaml": rules])
}

/// Headlines of every diagnostic, sorted: `b/rules.yaml:3:5: error: [code] message`.
func headlines(rules: String, bot: String? = nil) -> [String] {
    load(rules: rules, bot: bot).diagnostics.sortedForDisplay().map(\.headline)
}

/// A rule set that must load without errors.
func ruleSet(_ rules: String, bot: String? = nil, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> RuleSet {
    let r = load(rules: rules, bot: bot)
    let errors = r.diagnostics.filter { $0.severity == .error }.map(\.headline)
    #expect(errors.isEmpty, "unexpected errors: \(errors)", sourceLocation: sourceLocation)
    return try #require(r.ruleSet, sourceLocation: sourceLocation)
}

