import UsherDiagnostics

/// Builds the immutable node tree from parser events with an explicit stack (no recursion, so no
/// input can overflow the call stack), and reports what Usher files may not contain: anchors,
/// aliases, merge keys, duplicate or non-text keys, excessive nesting, a second document.
struct TreeBuilder {
    /// A collection under construction.
    private struct Frame {
        let isMapping: Bool
        let isFlow: Bool
        let start: Mark
        let tag: String?
        var items: [YAMLNode] = []
        var pairs: [YAMLPair] = []
        var pendingKey: YAMLNode?
        /// Where each scalar key was first seen, for duplicate detection.
        var firstKeys: [String: Mark] = [:]
    }

    /// At most this many anchor or alias reports each: an alias bomb holds hundreds.
    static let reportCap = 20

    let path: String
    let map: SourceMap
    let limits: YAMLLimits

    private var frames: [Frame] = []
    private(set) var root: YAMLNode?
    private(set) var diagnostics: [Diagnostic] = []
    private(set) var documentCount = 0
    /// Set when nesting went past `limits.maxDepth`; the tree is then incomplete.
    private(set) var tooDeep = false
    /// Where building stopped early (too deep, second document), if it did.
    private(set) var stoppedAt: Mark?
    /// Stretches of the file that libyaml read as one value or one flow collection, where a tab
    /// at the start of a line is whitespace, not indentation.
    private(set) var spans: [(start: Mark, end: Mark)] = []
    private var anchorReports = 0
    private var aliasReports = 0

    init(path: String, map: SourceMap, limits: YAMLLimits) {
        self.path = path
        self.map = map
        self.limits = limits
    }

    /// The starts of flow collections still open, innermost last.
    var openFlowStarts: [Mark] { frames.filter(\.isFlow).map(\.start) }

    private func location(_ mark: Mark) -> SourceLocation {
        SourceLocation(file: path, line: mark.line, column: mark.column)
    }

    /// Takes one event; returns `false` to stop the parse.
    mutating func handle(_ event: ParserEvent) -> Bool {
        switch event {
        case .documentStart(let start):
            documentCount += 1
            if documentCount > 1 {
                diagnostics.append(.error("multiple-documents", "only one YAML document per file is allowed",
                                          at: location(start)))
                stoppedAt = start
                return false
            }
        case .documentEnd:
            break
        case .alias(let start, let end):
            if aliasReports < Self.reportCap {
                aliasReports += 1
                diagnostics.append(.error(
                    "alias", "aliases (*name) are not supported in Usher files; repeat the value or use a $list",
                    at: location(start)))
            }
            // Never expanded: a null placeholder keeps the surrounding structure intact.
            complete(YAMLNode(.scalar("", .plain), start: start, end: end, file: path))
        case .scalar(let text, let style, let tag, let hasAnchor, let start, let end):
            if hasAnchor { reportAnchor(near: start) }
            // A tab that starts a continuation line of a plain value is almost always a mistaken
            // indentation, so only quoted and block values shelter tabs.
            if start.line != end.line, style != .plain { spans.append((start, end)) }
            complete(YAMLNode(.scalar(text, style), start: start, end: end, tag: tag, file: path))
        case .collectionStart(let isMapping, let isFlow, let tag, let hasAnchor, let start):
            if hasAnchor { reportAnchor(near: start) }
            if frames.count >= limits.maxDepth {
                diagnostics.append(.error("too-deep", "nesting is deeper than \(limits.maxDepth) levels",
                                          at: location(start)))
                tooDeep = true
                stoppedAt = start
                return false
            }
            frames.append(Frame(isMapping: isMapping, isFlow: isFlow, start: start, tag: tag))
        case .collectionEnd(let end):
            guard let frame = frames.popLast() else { return true }
            let node: YAMLNode
            if frame.isMapping {
                // A block collection's end event sits at the next token, often lines later; the
                // last entry's end is where the collection really ends.
                let last = frame.pairs.last?.value.end ?? frame.pendingKey?.end
                node = YAMLNode(.mapping(frame.pairs), start: frame.start,
                                end: frame.isFlow ? end : (last ?? end), tag: frame.tag, file: path)
            } else {
                node = YAMLNode(.sequence(frame.items), start: frame.start,
                                end: frame.isFlow ? end : (frame.items.last?.end ?? end), tag: frame.tag, file: path)
            }
            if frame.isFlow { spans.append((frame.start, end)) }
            complete(node)
        }
        return true
    }

    private mutating func complete(_ node: YAMLNode) {
        guard !frames.isEmpty else {
            if root == nil { root = node }
            return
        }
        let top = frames.count - 1
        if !frames[top].isMapping {
            frames[top].items.append(node)
        } else if let key = frames[top].pendingKey {
            frames[top].pairs.append(YAMLPair(key: key, value: node))
            frames[top].pendingKey = nil
        } else {
            check(key: node, in: top)
            frames[top].pendingKey = node
        }
    }

    private mutating func check(key: YAMLNode, in frame: Int) {
        guard case .scalar(let text, let style) = key.content else {
            diagnostics.append(.error("complex-key", "mapping keys must be plain text", at: key.location))
            return
        }
        if text == "<<", style == .plain, key.tag == nil {
            diagnostics.append(.error(
                "merge-key", "merge keys (<<) are not supported in Usher files; repeat the keys instead",
                at: key.location))
        }
        // Most mappings have a handful of keys: a scan of the pairs so far beats hashing. Large
        // ones switch to a dictionary.
        let pairs = frames[frame].pairs
        var first: Mark?
        if pairs.count < 16 {
            first = pairs.first { $0.key.scalar == text }?.key.start
        } else {
            if frames[frame].firstKeys.isEmpty {
                for p in pairs { if let k = p.key.scalar, frames[frame].firstKeys[k] == nil { frames[frame].firstKeys[k] = p.key.start } }
            }
            first = frames[frame].firstKeys[text]
            if first == nil { frames[frame].firstKeys[text] = key.start }
        }
        if let first {
            diagnostics.append(.error("duplicate-key", "duplicate key '\(text)' in this mapping", at: key.location,
                                      notes: [Diagnostic.Note("first defined here", at: location(first))]))
        }
    }

    /// Reports an anchor at its `&`, which follows the node's tag when the tag comes first.
    private mutating func reportAnchor(near start: Mark) {
        guard anchorReports < Self.reportCap else { return }
        anchorReports += 1
        var at = start
        if var i = map.index(of: start) {
            let s = map.scalars
            while i < s.count, s[i] == "!" {
                while i < s.count, !SourceMap.isBlank(s[i]), !SourceMap.isBreak(s[i]) { i += 1 }
                while i < s.count, SourceMap.isBlank(s[i]) || SourceMap.isBreak(s[i]) { i += 1 }
            }
            if i < s.count, s[i] == "&" { at = map.mark(at: i) }
        }
        diagnostics.append(.error(
            "anchor", "anchors (&name) are not supported in Usher files; repeat the value or use a $list",
            at: location(at)))
    }
}
