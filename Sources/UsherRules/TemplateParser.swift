import UsherDiagnostics
import UsherYAML

/// Template variables every rule may use, besides its own regex captures.
public enum BuiltinVariables {
    public static let all: Set<String> = [
        "customer.name", "customer.id", "conversation.id", "conversation.customer_messages",
        "conversation.bot_replies", "conversation.channel", "conversation.locale", "bot.name", "bot.id",
    ]

    /// `metadata.<key>` reads a value written by a `set` action.
    public static func isMetadata(_ name: String) -> Bool { name.hasPrefix("metadata.") && name.count > 9 }
}

/// Parses a template in a YAML scalar and checks that each variable can be set.
struct TemplateParser {
    let reader: NodeReader
    /// The rule's regex captures (built-ins are always allowed); `nil` when they are unknown
    /// (the rule's condition has errors), and then variables are not checked.
    let captures: Set<String>?
    /// "rule 'refund'", for messages.
    let context: String

    func parse(_ text: String, _ node: YAMLNode) -> Template? {
        switch Template.parse(text) {
        case let .failure(e):
            reader.report(.error("invalid-template", e.message, at: reader.location(ofOffset: e.offset, in: node)))
            return nil
        case let .success(t):
            var ok = true
            var offset = 0
            for part in t.parts {
                switch part {
                case let .literal(s):
                    offset += s.unicodeScalars.count
                case let .variable(name, fallback):
                    if let captures, !captures.contains(name), !BuiltinVariables.all.contains(name),
                       !BuiltinVariables.isMetadata(name) {
                        let allowed = captures.union(BuiltinVariables.all)
                        let captures = captures.sorted()
                        let why = captures.isEmpty
                            ? "\(context) has no regex with named groups"
                            : "\(context) can capture only \(captures.map { "'\($0)'" }.joined(separator: ", "))"
                        let hint = Suggestion.closest(to: name, in: allowed).map { "; did you mean '\($0)'?" }
                            ?? "; name a group in the rule's regex, like (?<\(name)>…)"
                        reader.report(.error("unknown-template-variable",
                                             "template variable '\(name)' can never be set: \(why)\(hint)",
                                             at: reader.location(ofOffset: offset + 2, in: node)))
                        ok = false
                    }
                    offset += 4 + name.unicodeScalars.count + (fallback.map { $0.unicodeScalars.count + 1 } ?? 0)
                }
            }
            return ok ? t : nil
        }
    }
}

extension TemplateParser {
    /// A customer-facing notice: one text, or `{en: …, es: …}` with a text per language, checked
    /// against the bot's languages as replies are (`LanguageMap`; `languages` nil: not checked).
    func localized(_ node: YAMLNode, _ what: String, languages: [String]?) -> LocalizedTemplate? {
        guard let pairs = node.mapping else {
            return reader.text(node, what).flatMap { parse($0, node) }.map(LocalizedTemplate.text)
        }
        guard LanguageMap.isPerLanguage(pairs, ownKeys: []) else {
            reader.error("wrong-type", "expected \(what) as a text, or a text per language like {en: \"…\", es: \"…\"}, found a mapping", at: node)
            return nil
        }
        let texts = LanguageMap.read(reader, node, pairs, what: "a notice", forms: "a text", languages: languages) { _, n in
            reader.text(n, what).flatMap { parse($0, n) }
        }
        return texts.map { .languages($0.map { LanguageTemplate(language: $0.language, template: $0.value) }) }
    }
}
