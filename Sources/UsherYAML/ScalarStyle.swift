/// How a scalar was written. The loader never converts scalars: `no`, `~` and `1e3` are text, and
/// the style lets callers tell `key: ""` from `key:`.
public enum ScalarStyle: Sendable, Hashable {
    /// Unquoted: `value`.
    case plain
    /// `'value'`, where `''` stands for one quote.
    case singleQuoted
    /// `"value"`, with backslash escapes.
    case doubleQuoted
    /// A `|` block: line breaks kept.
    case literal
    /// A `>` block: line breaks folded into spaces.
    case folded
}
