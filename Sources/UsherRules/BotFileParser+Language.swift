import Foundation
import UsherDiagnostics
import UsherText
import UsherYAML

extension BotFileParser {
    static let matchingKeys = JSONSchema.botMatching.propertyNames

    /// Scripts written without spaces between words: their keywords match anywhere in the text,
    /// so a missing stemmer changes nothing for them.
    static let unspacedLanguages: Set<String> = ["zh", "ja", "th", "lo", "km", "my"]

    /// `language: en` or `[en, es]` and `matching: {word_forms, typos}`, with the languages'
    /// dictionaries read when typos are on; nil after an error.
    func parseLanguages(_ m: [String: YAMLNode]) -> (languages: [String], matching: WordMatching, dictionaries: [SpellingDictionary])? {
        var ok = true
        var languages: [String] = []
        if let node = m["language"], let items = reader.texts(node, "'language'") {
            var seen: [String: YAMLNode] = [:]
            for (code, item) in items {
                guard Self.isLanguageCode(code) else {
                    reader.error("unknown-language", "'\(code)' is not a language code\(Self.languageHint(code)); write ISO 639 codes like en, es or zh", at: item)
                    ok = false
                    continue
                }
                if let first = seen[code] {
                    reader.error("duplicate-language", "language '\(code)' is listed twice", at: item,
                                 notes: [.init("first listed here", at: first.location)])
                    ok = false
                    continue
                }
                seen[code] = item
                languages.append(code)
            }
        } else if m["language"] != nil {
            ok = false
        }

        var matching = WordMatching.exact
        var dictionaries: [SpellingDictionary] = []
        if let node = m["matching"], let mm = reader.mapping(node, "'matching'", allowed: Self.matchingKeys) {
            for (key, option) in [("word_forms", WordMatching.forms), ("typos", .typos)] {
                guard let n = mm[key] else { continue }
                guard let on = reader.bool(n, "'\(key)'") else { ok = false; continue }
                if on { matching.insert(option) }
            }
            if !matching.isEmpty && languages.isEmpty {
                reader.error("missing-language", "'matching' needs the language your customers write in; add a line like 'language: en' (or 'language: [en, es]')", at: node)
                ok = false
            }
            if matching.contains(.forms) {
                let missing = languages.filter { !Stemmer.isAvailable($0) && !Self.unspacedLanguages.contains($0) }
                if !missing.isEmpty {
                    reader.warning("no-stemmer", "Snowball has no stemmer for \(missing.map { "'\($0)'" }.joined(separator: ", ")): word_forms cannot match other forms of \(missing.count == 1 ? "its" : "their") words, which match only as written", at: node)
                }
            }
            if matching.contains(.typos) && ok && languages.allSatisfy(Self.unspacedLanguages.contains) {
                // No dictionary to tell a typo from a word: typos would match every near word.
                reader.warning("no-typos", "typos: true has no effect for \(languages.joined(separator: ", ")): typos are told from words with the dictionary of a language written with spaces (en, es…)", at: node)
                matching.remove(.typos)
            }
            if matching.contains(.typos) && ok {
                for code in languages where !Self.unspacedLanguages.contains(code) {
                    do {
                        dictionaries.append(try SpellingDictionary.system(code))
                    } catch {
                        reader.error("missing-dictionary", "typos: true needs a spelling dictionary for every language of the bot, to tell typos from words spelled right: \(error.message)", at: node)
                        ok = false
                    }
                }
            }
        } else if m["matching"] != nil {
            ok = false
        }
        return ok ? (languages, matching, dictionaries) : nil
    }

    /// A lower-case ISO 639 code that Foundation knows (`en`, `es`, `yue`).
    static func isLanguageCode(_ s: String) -> Bool {
        (2...3).contains(s.utf8.count) && s.utf8.allSatisfy({ $0 &- 0x61 < 26 })
            && Locale.LanguageCode(s).isISOLanguage
    }

    /// "; did you mean 'en'?" for `English`, `EN` or `en-US`; empty when nothing fits.
    static func languageHint(_ s: String) -> String {
        let lower = s.lowercased()
        let base = String(lower.split(whereSeparator: { $0 == "-" || $0 == "_" }).first ?? "")
        if base != lower, isLanguageCode(base) { return "; did you mean '\(base)'?" }
        if isLanguageCode(lower) { return "; did you mean '\(lower)'?" }
        let english = Locale(identifier: "en")
        for code in Locale.LanguageCode.isoLanguageCodes where code.identifier.utf8.count == 2 {
            if english.localizedString(forLanguageCode: code.identifier)?.lowercased() == lower {
                return "; did you mean '\(code.identifier)'?"
            }
        }
        return ""
    }
}
