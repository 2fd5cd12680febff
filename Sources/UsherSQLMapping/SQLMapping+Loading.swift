public import UsherDiagnostics
import UsherYAML
import Foundation

extension SQLMapping {
    /// Reads and checks the mapping file at `path`: the mapping when there are no errors, and
    /// every diagnostic (warnings come with a mapping too).
    public static func load(path: String) -> (SQLMapping?, [Diagnostic]) {
        let r = read(path: path)
        return (r.mapping, r.diagnostics)
    }

    /// Checks a mapping file's text, as if read from `path`.
    public static func parse(path: String, text: String) -> (SQLMapping?, [Diagnostic]) {
        let (document, diagnostics) = YAMLLoader.load(path: path, text: text)
        let r = check(document, diagnostics)
        return (r.mapping, r.diagnostics)
    }

    /// `load(path:)`, with the file's text for quoting the diagnostics (`usher check`); the
    /// text is `nil` only when the file could not be read at all.
    public static func read(path: String) -> (mapping: SQLMapping?, diagnostics: [Diagnostic], source: SourceText?) {
        let (document, diagnostics) = YAMLLoader.loadFile(path: path)
        let r = check(document, diagnostics)
        // The loader gives no document for a file it could not parse; quote the raw text then.
        return (r.mapping, r.diagnostics, document?.source ?? rawText(path))
    }

    /// Whether `path` is a mapping file: a YAML file whose top level has the key `mapping`.
    /// A file too broken to parse counts when a line starts with `mapping:`.
    public static func isMappingFile(path: String) -> Bool {
        let (document, _) = YAMLLoader.loadFile(path: path)
        if let document {
            return document.root?.mapping?.contains { $0.key.scalar == "mapping" } ?? false
        }
        return rawText(path)?.lines.contains { $0.hasPrefix("mapping:") } ?? false
    }

    private static func check(_ document: YAMLDocument?, _ loaded: [Diagnostic]) -> (mapping: SQLMapping?, diagnostics: [Diagnostic]) {
        // The loader's advice for anchors is for rule files; mapping files have no $lists.
        let yaml = loaded.map { d in
            var d = d
            if d.code == "anchor" { d.message = d.message.replacingOccurrences(of: " or use a $list", with: "") }
            return d
        }
        // An alias stands in the tree as an empty value and a too-deep file is cut short:
        // checking their meaning would only report the same mistake again in other words.
        guard let document, document.root != nil,
              !yaml.contains(where: { $0.code == "alias" || $0.code == "too-deep" }) else { return (nil, yaml) }
        let reader = NodeReader(document: document)
        var parser = MappingFileParser(reader: reader)
        let mapping = parser.parse()
        let all = yaml + reader.diagnostics
        return (all.hasErrors ? nil : mapping, all)
    }

    /// The file's first `YAMLLimits.default.maxBytes` bytes as text.
    private static func rawText(_ path: String) -> SourceText? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: YAMLLimits.default.maxBytes) else { return nil }
        return SourceText(path: path, text: String(decoding: data, as: UTF8.self))
    }
}

private extension SourceText {
    var lines: [Substring] { (0..<lineCount).compactMap { line($0 + 1) } }
}
