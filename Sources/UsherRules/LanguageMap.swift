import UsherYAML

/// A value written once per language, `{en: …, es: …}`: a reply of a rule file, and the
/// customer-facing notices of bot.yaml and of rules. One reader for all of them, so that every
/// text per language is checked against the bot's languages the same way.
enum LanguageMap {
    /// Whether a mapping is written per language: a key is a language code and none is one of
    /// `ownKeys`, the keys the value has when it is not per language (`text`, `sequence`).
    static func isPerLanguage(_ pairs: [YAMLPair], ownKeys: [String]) -> Bool {
        !pairs.contains { ownKeys.contains($0.key.scalar ?? "") }
            && pairs.contains { BotFileParser.isLanguageCode($0.key.scalar ?? "") }
    }

    /// Reads each language's value with `read`, in the file's order. A key that is not a
    /// language code is an error (`misplaced` may explain a known key that belongs elsewhere,
    /// like `quick_replies`); a language the bot does not declare, and one of the bot's
    /// languages missing, are warnings. `languages`: the bot's; nil when checking rule files
    /// without a bot (not checked then). `what`: "a reply", and `forms`: what each language's
    /// value may be, for messages.
    static func read<Value>(_ reader: NodeReader, _ node: YAMLNode, _ pairs: [YAMLPair], what: String, forms: String,
                            languages: [String]?,
                            misplaced: (String) -> String? = { _ in nil },
                            _ read: (String, YAMLNode) -> Value?) -> [(language: String, value: Value)]? {
        var values: [(language: String, value: Value)] = []
        var ok = true
        for pair in pairs {
            guard let code = pair.key.scalar else { continue }
            guard BotFileParser.isLanguageCode(code) else {
                reader.error("unknown-language", misplaced(code)
                    ?? "'\(code)' is not a language code\(BotFileParser.languageHint(code)); \(what) per language maps codes like en or es to texts",
                    at: pair.key)
                ok = false
                continue
            }
            if let inner = pair.value.mapping, inner.contains(where: { BotFileParser.isLanguageCode($0.key.scalar ?? "") }) {
                reader.error("wrong-type", "\(what.hasPrefix("a ") ? "the " + what.dropFirst(2) : what) for '\(code)' is \(forms), not another mapping of languages", at: pair.value)
                ok = false
                continue
            }
            guard let value = read(code, pair.value) else { ok = false; continue }
            values.append((code, value))
            if let languages, !languages.contains(code) {
                let declared = languages.isEmpty ? "bot.yaml declares no language (add 'language: [\(pairs.compactMap(\.key.scalar).joined(separator: ", "))]')"
                    : "bot.yaml declares \(languages.joined(separator: ", "))"
                reader.warning("undeclared-language", "\(what) in '\(code)', which is not a language of the bot (\(declared)): it answers only conversations whose locale is \(code)", at: pair.key)
            }
        }
        guard ok else { return nil }
        if let languages {
            let missing = languages.filter { l in !values.contains { $0.language == l } }
            if !missing.isEmpty, let first = values.first {
                let fallback = values.first { $0.language == languages.first }?.language ?? first.language
                reader.warning("missing-language", "no text in \(missing.map { "'\($0)'" }.joined(separator: ", ")), a language of the bot: \(missing.count == 1 ? "its customers get" : "their customers get") the '\(fallback)' text; add '\(missing[0]): \"…\"'", at: node)
            }
        }
        return values
    }
}
