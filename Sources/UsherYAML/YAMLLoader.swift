public import UsherDiagnostics

/// Reads Usher's YAML files: exactly one document, every problem a diagnostic with a file, line
/// and column, nothing that can crash, hang or exhaust memory.
///
/// Codes: `file-too-large`, `byte-order-mark` (a warning), `invalid-utf8`, `invalid-character`,
/// `empty-file`, `tab-indent`, `bad-indentation`, `yaml-syntax`, `multiple-documents`, `too-deep`, `anchor`,
/// `alias`, `merge-key`, `duplicate-key`, `complex-key`, and `unreadable-file` from `loadFile`.
public enum YAMLLoader {
    /// At most this many `tab-indent` reports per file.
    static let tabReportCap = 20

    /// Parses exactly one document from UTF-8 `bytes`.
    ///
    /// Returns a document whenever the YAML could be parsed — with a `nil` root for a file with
    /// no document, and even with errors such as duplicate keys, so callers can keep validating —
    /// and `nil` when it could not be parsed at all (too large, not UTF-8, a syntax error, too
    /// deep). Scalars are never converted: `no`, `~` and `1e3` are plain text.
    public static func load(path: String, bytes: [UInt8],
                            limits: YAMLLimits = .default) -> (YAMLDocument?, [Diagnostic]) {
        let origin = SourceLocation(file: path, line: 1, column: 1)
        func at(_ mark: Mark) -> SourceLocation { SourceLocation(file: path, line: mark.line, column: mark.column) }

        guard bytes.count <= limits.maxBytes else {
            return (nil, [.error("file-too-large", tooLargeMessage(size: bytes.count, limit: limits.maxBytes),
                                 at: origin)])
        }
        var diagnostics: [Diagnostic] = []
        var body = bytes
        if body.starts(with: [0xEF, 0xBB, 0xBF]) {
            diagnostics.append(.warning(
                "byte-order-mark", "the file starts with a byte-order mark; save it as UTF-8 without BOM",
                at: origin))
            body.removeFirst(3)
        }

        // UTF-16 would be a bad byte or a NUL every other byte: one error says it all.
        if body.starts(with: [0xFF, 0xFE]) || body.starts(with: [0xFE, 0xFF]) {
            diagnostics.append(.error(
                "invalid-utf8", "the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8", at: origin))
            return (nil, diagnostics)
        }
        let map: SourceMap
        switch SourceMap.decode(body) {
        case .success(let decoded):
            map = decoded
        case .failure(let failures):
            for failure in failures.list {
                switch failure {
                case .invalidUTF8(let bad, let more, let mark):
                    let shown = bad.map { "0x" + hex(UInt32($0), width: 2) }.joined(separator: " ") + (more > 0 ? " …" : "")
                    let what = bad.count + more == 1 ? "invalid UTF-8 byte \(shown)" : "\(bad.count + more) bytes of invalid UTF-8 (\(shown))"
                    diagnostics.append(.error("invalid-utf8", "\(what); save the file as UTF-8", at: at(mark)))
                case .invalidCharacter(let scalar, let mark):
                    let v = scalar.value
                    let kind = v < 0x20 || (0x7F...0x9F).contains(v) ? "control character" : "character"
                    diagnostics.append(.error(
                        "invalid-character", "\(kind) U+\(hex(v, width: 4)) is not allowed in YAML files; remove it",
                        at: at(mark)))
                case .more(let count, let mark):
                    diagnostics.append(.error(
                        failures.list.contains { if case .invalidUTF8 = $0 { true } else { false } } ? "invalid-utf8" : "invalid-character",
                        "and \(count) more place\(count == 1 ? "" : "s") from here on that \(count == 1 ? "is" : "are") not UTF-8 text; save the file as UTF-8",
                        at: at(mark)))
                }
            }
            return (nil, diagnostics)
        }
        let source = SourceText(path: path, text: String(decoding: body, as: UTF8.self))
        let empty = Diagnostic.error("empty-file", "the file is empty", at: origin)
        // libyaml must never see an empty buffer; blank files are settled here.
        if body.isEmpty || map.isBlankOrComments {
            return (YAMLDocument(path: path, source: source, root: nil, sourceMap: map), diagnostics + [empty])
        }

        var builder = TreeBuilder(path: path, map: map, limits: limits)
        let failure = LibYAMLParser.parse(body) { builder.handle($0) }
        diagnostics += builder.diagnostics

        // Tabs in leading whitespace, except where libyaml read them as whitespace inside a value
        // or a flow collection (and where the parse did not reach, when it stopped cleanly).
        var spans = builder.spans
        let beyond = Mark(line: .max, column: .max)
        spans += builder.openFlowStarts.map { ($0, beyond) }
        // libyaml failed inside a quoted or block value (an unclosed quote): tabs in it are text.
        if let failure, let context = failure.context, let start = failure.contextMark,
           context.hasSuffix("quoted scalar") || context.hasSuffix("block scalar") {
            spans.append((start, failure.problemMark))
        }
        var tabs = TabIndentation.candidates(in: map).filter { tab in
            !spans.contains { $0.start < tab && tab < $0.end }
                && (failure != nil || builder.stoppedAt.map { tab < $0 } ?? true)
        }
        var syntax: Diagnostic?
        if let failure {
            let mark = failure.kind == .reader
                ? map.mark(at: SourceMap.scalarIndex(atByteOffset: failure.problemOffset, in: body))
                : failure.problemMark
            if failure.isAboutTab(in: map) {
                if !tabs.contains(where: { $0.line == mark.line }) { tabs.append(mark) }
            } else if !tabs.contains(where: { $0.line <= mark.line }) {
                // A tab earlier in the file is what derailed libyaml; its own message would confuse.
                if let key = failure.misindentedKey(in: map) {
                    syntax = .error("bad-indentation", key.message, at: at(key.at))
                } else {
                    syntax = .error("yaml-syntax", failure.message(in: map), at: at(mark))
                }
            }
        }
        for tab in tabs.sorted().prefix(tabReportCap) {
            diagnostics.append(.error("tab-indent", "tab character used for indentation; YAML needs spaces",
                                      at: at(tab)))
        }
        if let syntax { diagnostics.append(syntax) }
        diagnostics = sortedByLocation(diagnostics)

        if failure != nil || builder.tooDeep { return (nil, diagnostics) }
        if builder.documentCount == 0 {
            let document = YAMLDocument(path: path, source: source, root: nil, sourceMap: map)
            return (document, sortedByLocation(diagnostics + [empty]))
        }
        return (YAMLDocument(path: path, source: source, root: builder.root, sourceMap: map), diagnostics)
    }

    /// Parses exactly one document from `text`; see `load(path:bytes:limits:)`.
    public static func load(path: String, text: String,
                            limits: YAMLLimits = .default) -> (YAMLDocument?, [Diagnostic]) {
        load(path: path, bytes: Array(text.utf8), limits: limits)
    }

    /// File order, stably: the order a reader meets the problems in.
    private static func sortedByLocation(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        diagnostics.enumerated().sorted { l, r in
            switch (l.element.location, r.element.location) {
            case let (a?, b?) where a != b: return a < b
            case (nil, _?): return true
            case (_?, nil): return false
            default: return l.offset < r.offset
            }
        }.map(\.element)
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// "the file is 2.0 MiB; the limit is 1.0 MiB", in exact bytes when rounding would hide the
    /// difference.
    static func tooLargeMessage(size: Int, limit: Int) -> String {
        var a = describe(bytes: size), b = describe(bytes: limit)
        if a == b { (a, b) = ("\(size) bytes", "\(limit) bytes") }
        return "the file is \(a); the limit is \(b)"
    }

    private static func describe(bytes n: Int) -> String {
        func tenths(_ unit: Int) -> String {
            let t = (n.multipliedReportingOverflow(by: 10).overflow ? n / unit * 10 : (n * 10 + unit / 2) / unit)
            return "\(t / 10).\(t % 10)"
        }
        if n >= 1 << 30 { return "\(tenths(1 << 30)) GiB" }
        if n >= 1 << 20 { return "\(tenths(1 << 20)) MiB" }
        if n >= 1 << 10 { return "\(tenths(1 << 10)) KiB" }
        return n == 1 ? "1 byte" : "\(n) bytes"
    }
}
