// libFuzzer harness for the YAML loader and the rule loader: every input is loaded as a rule
// file of a bot, and as a bot file, through the same code as `usher check`.
//
//     swift build --scratch-path .build/fuzz -c debug --sanitize=fuzzer --product FuzzYAML
//     .build/fuzz/debug/FuzzYAML -max_total_time=60 fuzz/corpus/yaml
//
// libFuzzer supplies `main` and calls `LLVMFuzzerTestOneInput` for every input; there are no
// top-level statements here.
import UsherDiagnostics
import UsherRules
import UsherYAML

enum Fixture {
    static let bot = "bot: fuzz\ntimezone: Asia/Shanghai\nrules: [rules.yaml]\nschedules:\n  hours: {mon-fri: \"09:00-18:00\"}\n"
    static let rules = "version: 1\nrules:\n  - id: hello\n    when: {keywords: [hello]}\n    then: [reply: hi]\n"
    static let limits = YAMLLimits(maxBytes: 64 * 1024, maxDepth: 64)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The raw loader sees the bytes as they are, invalid UTF-8 included.
    let (doc, diagnostics) = YAMLLoader.load(path: "f.yaml", bytes: bytes, limits: Fixture.limits)
    for d in diagnostics {
        precondition(d.location.map { $0.line >= 1 && $0.column >= 1 } ?? true, "a diagnostic without a real position")
    }
    if doc == nil { precondition(diagnostics.hasErrors, "no document and no error") }

    // The rule loader, with the input as the rule file and then as the bot file.
    let text = String(decoding: bytes, as: UTF8.self)
    let options = RuleSetLoader.Options(yaml: Fixture.limits)
    let asRules = RuleSetLoader.loadBot(botPath: "b/bot.yaml", files: ["b/bot.yaml": Fixture.bot, "b/rules.yaml": text], options: options)
    precondition((asRules.ruleSet == nil) == asRules.diagnostics.hasErrors, "a rule set with errors, or none without")
    let asBot = RuleSetLoader.loadBot(botPath: "b/bot.yaml", files: ["b/bot.yaml": text, "b/rules.yaml": Fixture.rules], options: options)
    precondition((asBot.ruleSet == nil) == asBot.diagnostics.hasErrors, "a rule set with errors, or none without")

    // Printing every diagnostic with its source line must not trap either.
    var printer = DiagnosticPrinter()
    printer.add(asRules.sources)
    _ = printer.render(all: asRules.diagnostics)
    return 0
}
