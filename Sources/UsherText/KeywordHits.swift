/// The ids of the keywords (or literals) found in one message.
public struct KeywordHits: Sendable, Equatable {
    /// The ids found, sorted, each once.
    public let ids: [Int]

    /// Hits from ids in any order, with repeats.
    init(unsorted ids: [Int]) {
        if ids.count < 2 {
            self.ids = ids
        } else {
            var sorted = ids.sorted()
            var write = 1
            for read in 1..<sorted.count where sorted[read] != sorted[write - 1] {
                sorted[write] = sorted[read]
                write += 1
            }
            sorted.removeLast(sorted.count - write)
            self.ids = sorted
        }
    }

    /// True if the keyword with this id was found.
    public func contains(_ id: Int) -> Bool {
        var low = 0
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < ids.count && ids[low] == id
    }

    /// True if nothing was found.
    public var isEmpty: Bool { ids.isEmpty }
}
