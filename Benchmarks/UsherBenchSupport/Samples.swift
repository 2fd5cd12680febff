/// Durations measured one by one, in milliseconds, and their order statistics.
public struct Samples: Sendable {
    public private(set) var values: [Double] = []

    public init(_ values: [Double] = []) { self.values = values }

    public mutating func add(_ ms: Double) { values.append(ms) }

    /// The value below which a fraction `p` of the samples lie (nearest rank).
    public func percentile(_ p: Double) -> Double {
        let s = values.sorted()
        return s.isEmpty ? 0 : s[min(s.count - 1, Int(Double(s.count - 1) * p + 0.5))]
    }

    public var p50: Double { percentile(0.5) }
    public var p99: Double { percentile(0.99) }
    public var max: Double { values.max() ?? 0 }
    public var count: Int { values.count }
}
