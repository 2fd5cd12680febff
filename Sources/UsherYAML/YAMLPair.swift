/// One entry of a mapping, in file order.
public struct YAMLPair: Sendable {
    /// The key; a scalar in every well-formed Usher file (other keys are reported as `complex-key`).
    public let key: YAMLNode
    /// The value; an empty plain scalar when the file gives none (`key:`).
    public let value: YAMLNode

    /// A pair of `key` and `value`.
    public init(key: YAMLNode, value: YAMLNode) {
        self.key = key
        self.value = value
    }
}
