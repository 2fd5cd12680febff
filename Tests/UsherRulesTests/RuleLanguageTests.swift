import Foundation
import Testing
import UsherDiagnostics
import UsherRules

/// The rule language is declared once (`ConditionKind.all`, `ActionKind.all`, the schemas in
/// `JSONSchema+RuleFile.swift` and `JSONSchema+BotFile.swift`); these tests keep what is derived
/// from it — the checked-in schemas and the docs' tables — equal to it, and the compiler
/// accepting every declared key. `UPDATE_SNAPSHOTS=1 swift test --filter RuleLanguageTests`
/// rewrites the derived files; review the diff before committing.
@Suite("The rule language's declaration")
struct RuleLanguageTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static var updating: Bool { ProcessInfo.processInfo.environment["UPDATE_SNAPSHOTS"] != nil }

    static let schemas = ["schema/rules.schema.json": JSONSchema.ruleFile, "schema/bot.schema.json": JSONSchema.botFile]

    @Test(arguments: schemas.keys.sorted())
    func checkedInSchemaIsTheGeneratedOne(_ path: String) throws {
        let schema = try #require(Self.schemas[path])
        let file = Self.root.appendingPathComponent(path)
        if Self.updating { try Data(schema.text.utf8).write(to: file) }
        let onDisk = try String(contentsOf: file, encoding: .utf8)
        #expect(onDisk == schema.text, "\(path) is not the generated schema; run `usher schema --out schema` and review the diff")
        let parsed = try JSONSerialization.jsonObject(with: Data(schema.text.utf8)) as? [String: Any]
        #expect(parsed?["$schema"] as? String == "http://json-schema.org/draft-07/schema#")
    }

    /// A `$ref` to a definition that is not there makes editors reject the whole schema.
    @Test(arguments: schemas.keys.sorted())
    func everyReferenceResolves(_ path: String) throws {
        let schema = try #require(Self.schemas[path])
        let defined = Set(schema["definitions"]?.memberKeys ?? [])
        let referenced = schema.references
        #expect(!referenced.isEmpty)
        for ref in referenced {
            #expect(ref.hasPrefix("#/definitions/") && defined.contains(String(ref.dropFirst("#/definitions/".count))),
                    "unresolved \(ref)")
        }
        #expect(Set(referenced.map { String($0.dropFirst("#/definitions/".count)) }) == defined,
                "definitions nothing refers to: \(defined.subtracting(referenced.map { String($0.dropFirst("#/definitions/".count)) }))")
    }

    @Test func keysAreUniqueSnakeCaseAndNotRuleOptions() {
        let ruleOptions = Set(JSONSchema.rule.propertyNames)
        for keys in [ConditionKind.keys, ActionKind.keys] {
            #expect(Set(keys).count == keys.count, "a key declared twice in \(keys)")
            for key in keys {
                #expect(key.wholeMatch(of: /[a-z]+(_[a-z]+)*/) != nil, "'\(key)' is not snake_case")
                // The compiler's "is a rule option: move it out" hint relies on this.
                #expect(!ruleOptions.contains(key), "'\(key)' is also a rule option")
            }
        }
    }

    /// Each declared condition compiles from a value of its shape, alone in a rule's `when`.
    @Test(arguments: ConditionKind.all.map(\.key))
    func everyConditionCompiles(_ key: String) throws {
        let kind = try #require(ConditionKind.byKey[key])
        let sample = switch kind.value {
        case .keywords: "{any: [refund], all: [money], none: [$thanks]}"
        case .patterns: #"['\bcharge\s?back\b', '(?<order>\d{3}-\d{7})']"#
        case .count: "{at_least: 1, at_most: 3}"
        case .timeRange: "{at_least: 1m, at_most: 2h}"
        case .schedule: "business_hours"
        case .tags: "{any: [vip], all: [has-order], none: [blocked]}"
        case .glob: "app-*"
        case .conditions: "[{keywords: [refund]}, {customer_messages: 2}]"
        case .negated: "{keywords: [refund]}"
        }
        let rules = "version: 1\nlists:\n  thanks: [thanks]\nrules:\n  - id: r\n    when: {\(key): \(sample)}\n    then: [reply: ok]\n"
        let set = try ruleSet(rules)
        #expect(set.rules.map(\.id) == ["r"])
        #expect(set.rules.first?.when != nil)
    }

    /// Each declared action compiles from a value of its shape, with every field its schema names.
    @Test(arguments: ActionKind.all.map(\.key))
    func everyActionCompiles(_ key: String) throws {
        let kind = try #require(ActionKind.byKey[key])
        let sample = switch kind.value {
        case .reply: #"{sequence: ["first", "second"], quick_replies: [Help, {title: Returns, url: "https://shop.example/returns"}]}"#
        case .notice: #"{en: "A notice", es: "Un aviso"}"#
        case .handoff: #"{reason: billing, queue: payments, priority: high, message: "One moment"}"#
        case .tagName: "vip"
        case .notify: #"{text: "VIP waiting", queue: vip}"#
        case .metadata: "{plan: premium}"
        }
        let set = try ruleSet("version: 1\nrules:\n  - id: r\n    then: [\(key): \(sample)]\n")
        #expect(set.rules.first?.actions.count == 1)
    }

    // MARK: The docs' tables

    /// The conditions and actions tables of docs/DESIGN.md, as generated from the declaration.
    static let tables: [(name: String, markdown: String)] = [
        ("conditions", table(header: "| key | value | meaning |",
                             rows: ConditionKind.all.map { ($0.key, $0.value.forms, $0.summary) })),
        ("actions", table(header: "| action | value | effect |",
                          rows: ActionKind.all.map { ($0.key, $0.value.forms, $0.summary) })),
    ]

    static func table(header: String, rows: [(key: String, forms: String, summary: String)]) -> String {
        ([header, "|---|---|---|"] + rows.map { "| `\($0.key)` | \($0.forms) | \($0.summary) |" })
            .joined(separator: "\n")
    }

    @Test func designTablesAreGeneratedFromTheDeclaration() throws {
        let file = Self.root.appendingPathComponent("docs/DESIGN.md")
        var text = try String(contentsOf: file, encoding: .utf8)
        for (name, markdown) in Self.tables {
            let begin = "<!-- \(name): generated from the rule language's declaration (see docs/rule-language.md) -->\n"
            let end = "\n<!-- end of \(name) -->"
            let start = try #require(text.range(of: begin), "docs/DESIGN.md has no generated \(name) table")
            let stop = try #require(text.range(of: end, range: start.upperBound..<text.endIndex))
            let written = String(text[start.upperBound..<stop.lowerBound])
            if Self.updating { text.replaceSubrange(start.upperBound..<stop.lowerBound, with: markdown) }
            #expect(Self.updating || written == markdown, "docs/DESIGN.md's \(name) table differs from the declaration:\n\(markdown)")
        }
        if Self.updating { try Data(text.utf8).write(to: file) }
    }
}

extension JSONSchema {
    /// The keys of an object, in order.
    var memberKeys: [String] {
        guard case let .object(members) = self else { return [] }
        return members.map(\.key)
    }

    /// Every `$ref` anywhere inside.
    var references: [String] {
        switch self {
        case let .object(members):
            members.flatMap { m -> [String] in
                if m.key == "$ref", case let .string(ref) = m.value { [ref] } else { m.value.references }
            }
        case let .array(items): items.flatMap(\.references)
        case .string, .integer, .bool: []
        }
    }
}
