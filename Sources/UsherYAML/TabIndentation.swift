/// Finds lines indented with tabs before libyaml does: libyaml's own messages for them ("found
/// character that cannot start any token") do not say what is wrong.
enum TabIndentation {
    /// The first tab in the leading whitespace of every line that has content (not only blanks
    /// or a comment), skipping lines that look like the body of a `|` or `>` block, where tabs
    /// are text. Tabs inside quoted values and flow collections are whitespace to libyaml; the
    /// loader drops those candidates once it knows where such values are.
    static func candidates(in map: SourceMap) -> [Mark] {
        let s = map.scalars
        var result: [Mark] = []
        // Inside a block scalar: the indentation of the line that opened it.
        var blockParentIndent: Int?
        for line in 1...map.lineCount {
            let range = map.lineRange(line)
            var i = range.lowerBound
            var spaces = 0
            var firstTab: Int?
            while i < range.upperBound, SourceMap.isBlank(s[i]) {
                if s[i] == "\t" {
                    if firstTab == nil { firstTab = i }
                } else if firstTab == nil {
                    spaces += 1
                }
                i += 1
            }
            let isBlank = i == range.upperBound
            if let parent = blockParentIndent {
                if isBlank || spaces > parent { continue }
                blockParentIndent = nil
            }
            guard !isBlank, s[i] != "#" else { continue }
            if let firstTab { result.append(map.mark(at: firstTab)) }
            if opensBlockScalar(s[i..<range.upperBound]) { blockParentIndent = spaces }
        }
        return result
    }

    /// Whether a line's content ends in a block scalar header (`key: |`, `- >-`, `!!str |2`).
    static func opensBlockScalar(_ content: ArraySlice<Unicode.Scalar>) -> Bool {
        var text = Array(content)
        // Drop a comment: `#` after a blank.
        if let hash = text.indices.first(where: { $0 > 0 && text[$0] == "#" && SourceMap.isBlank(text[$0 - 1]) }) {
            text = Array(text[..<hash])
        }
        let tokens = text.split(whereSeparator: SourceMap.isBlank)
        guard let last = tokens.last, let head = last.first, head == "|" || head == ">",
              last.dropFirst().allSatisfy({ $0 == "+" || $0 == "-" || ("0"..."9").contains($0) })
        else { return false }
        guard tokens.count > 1 else { return true }
        let before = tokens[tokens.count - 2]
        return before.last == ":" || before == ["-"] || before.first == "!" || before.first == "&"
    }
}
