/// The ids of the keywords (or literals) found in one message.
public struct KeywordHits: Sendable, Equatable {
    /// The ids found, sorted, each once.
    public let ids: [Int]

    /// Hits from ids in any order, with repeats; sorts the caller's buffer in place.
    init(unsorted ids: consuming [Int]) {
        var ids = ids
        if ids.count > 1 {
            ids.sort()
            var write = 1
            for read in 1..<ids.count where ids[read] != ids[write - 1] {
                ids[write] = ids[read]
                write += 1
            }
            ids.removeLast(ids.count - write)
        }
        self.ids = ids
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
