import Testing
import UsherDiagnostics
@testable import UsherYAML

/// Loads inline YAML as `t.yaml`.
func load(_ text: String, limits: YAMLLimits = .default) -> (YAMLDocument?, [Diagnostic]) {
    YAMLLoader.load(path: "t.yaml", text: text, limits: limits)
}

/// `code@line:col` for each diagnostic, the compact form the tables compare.
func summary(_ diagnostics: [Diagnostic]) -> [String] {
    diagnostics.map { d in
        "\(d.code)@" + (d.location.map { "\($0.line):\($0.column)" } ?? "-")
    }
}

/// Parses `text`, requiring a document with a root and no diagnostics.
func root(_ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> YAMLNode {
    let (document, diagnostics) = load(text)
    #expect(diagnostics.isEmpty, "\(diagnostics.map(\.headline))", sourceLocation: sourceLocation)
    return try #require(document?.root, sourceLocation: sourceLocation)
}
