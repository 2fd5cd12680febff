/// Bounds that keep a hostile or mistaken file from exhausting memory, time or the stack.
public struct YAMLLimits: Sendable {
    /// Files larger than this many bytes are rejected (`file-too-large`) before parsing.
    public var maxBytes: Int
    /// Collections nested deeper than this are rejected (`too-deep`). Trees are freed
    /// recursively, so keep it in the hundreds at most.
    public var maxDepth: Int

    /// 1 MiB and 64 levels: far beyond any hand-written rule file.
    public static let `default` = YAMLLimits(maxBytes: 1 << 20, maxDepth: 64)

    /// Limits of `maxBytes` bytes and `maxDepth` nested collections.
    public init(maxBytes: Int, maxDepth: Int) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
    }
}
