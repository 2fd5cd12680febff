/// An Aho-Corasick automaton over bytes: finds every occurrence of every pattern in one pass, at a
/// cost that depends on the text and the number of hits, not on the number of patterns.
///
/// Bytes are mapped to equivalence classes first (bytes no pattern contains share class 0), which
/// keeps rows short. States are numbered breadth-first; the shallow ones — where a scan spends
/// almost all of its time — get a full row of resolved transitions (a DFA), the deeper ones keep
/// only their own edges and a failure link. Transitions hold a *reference* rather than a state
/// number: a dense state's row offset, or `sparseBase` plus a sparse state's index, with the top
/// bit set when a pattern ends in the target. The scan's critical path is then one load per byte.
/// Everything lives in one `[Int32]`.
struct AhoCorasick: Sendable {
    /// Offsets of the sections of `table`.
    private struct Layout: Sendable {
        var classOf = 0        // 256 entries: byte → class
        var dense = 0          // denseCount × classCount references: the shallow states' rows
        var sparseStart = 0    // sparseCount + 1 entries into the edge sections
        var edgeClass = 0
        var edgeTarget = 0     // references
        var sparseFail = 0     // sparseCount references (without the report bit)
        var stateFail = 0      // stateCount state numbers, for reporting
        var report = 0         // stateCount entries: the nearest state on the failure chain (itself
                               // included) where a pattern ends, or −1
        var outputStart = 0    // stateCount + 1 entries into `outputs`
        var outputs = 0        // pattern numbers, grouped by the state where they end
    }

    /// The bit of a reference that says a pattern ends in its state.
    private static let reportBit: Int32 = 1 << 30

    private let table: [Int32]
    private let layout: Layout
    private let classCount: Int
    private let denseCount: Int
    /// References at or above this are sparse states.
    private let sparseBase: Int32
    /// The length in bytes of each pattern, by pattern number.
    let patternLengths: [Int]
    /// True when every pattern is empty, so nothing can ever match.
    let isEmpty: Bool

    /// The number of table entries the shallow dense rows may use (1 MiB).
    private static let denseBudget = 1 << 18

    /// Builds the automaton. Empty patterns never match. With `asciiCaseInsensitive`, ASCII
    /// letters match either case, in the patterns and in the text.
    init(patterns: [[UInt8]], asciiCaseInsensitive: Bool = false) {
        patternLengths = patterns.map(\.count)

        // Byte classes.
        var classOf = [Int32](repeating: 0, count: 256)
        var classCount: Int32 = 1
        for pattern in patterns {
            for byte in pattern where classOf[Int(byte)] == 0 {
                let isLetter = asciiCaseInsensitive && (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A
                if isLetter {
                    classOf[Int(byte | 0x20)] = classCount
                    classOf[Int(byte & ~0x20)] = classCount
                } else {
                    classOf[Int(byte)] = classCount
                }
                classCount += 1
            }
        }
        self.classCount = Int(classCount)

        // The trie, in insertion order, in flat arrays: each state's children form a linked list
        // (tens of thousands of patterns make hundreds of thousands of states; an array per
        // state would cost as many allocations).
        var firstChild: [Int32] = [-1]
        var nextSibling: [Int32] = [-1]
        var edgeClassOf: [Int32] = [0]     // the class of the edge into each state
        var endHead: [Int32] = [-1]        // each state's patterns, newest first
        var endNext: [Int32] = []
        var endPattern: [Int32] = []
        let total = patterns.reduce(0) { $0 + $1.count }
        firstChild.reserveCapacity(total + 1)
        nextSibling.reserveCapacity(total + 1)
        edgeClassOf.reserveCapacity(total + 1)
        endHead.reserveCapacity(total + 1)
        // The root has a child for almost every class: index it directly instead of walking.
        var rootChild = [Int32](repeating: -1, count: Int(classCount))
        for (number, pattern) in patterns.enumerated() where !pattern.isEmpty {
            var state = 0
            for byte in pattern {
                let cls = classOf[Int(byte)]
                var child: Int32
                if state == 0 {
                    child = rootChild[Int(cls)]
                } else {
                    child = firstChild[state]
                    while child >= 0 && edgeClassOf[Int(child)] != cls { child = nextSibling[Int(child)] }
                }
                if child < 0 {
                    child = Int32(firstChild.count)
                    firstChild.append(-1)
                    nextSibling.append(firstChild[state])
                    edgeClassOf.append(cls)
                    endHead.append(-1)
                    firstChild[state] = child
                    if state == 0 { rootChild[Int(cls)] = child }
                }
                state = Int(child)
            }
            endPattern.append(Int32(number))
            endNext.append(endHead[state])
            endHead[state] = Int32(endPattern.count - 1)
        }
        let stateCount = firstChild.count
        isEmpty = stateCount == 1

        // Breadth-first renumbering with each state's children sorted by class: the children of
        // a state then get consecutive numbers, so `childBegin..<childEnd` lists them.
        var order = [Int32](repeating: 0, count: stateCount)   // new number → old
        var childBegin = [Int32](repeating: 0, count: stateCount)
        var childEnd = [Int32](repeating: 0, count: stateCount)
        var cls = [Int32](repeating: 0, count: stateCount)     // by new number
        var depth = [Int32](repeating: 0, count: stateCount)
        var appended = 1
        var scratch: [Int32] = []
        for new in 0..<stateCount {
            let old = Int(order[new])
            scratch.removeAll(keepingCapacity: true)
            var child = firstChild[old]
            while child >= 0 { scratch.append(child); child = nextSibling[Int(child)] }
            scratch.sort { edgeClassOf[Int($0)] < edgeClassOf[Int($1)] }
            childBegin[new] = Int32(appended)
            for c in scratch {
                order[appended] = c
                cls[appended] = edgeClassOf[Int(c)]
                depth[appended] = depth[new] + 1
                appended += 1
            }
            childEnd[new] = Int32(appended)
        }

        func child(_ state: Int, _ c: Int32) -> Int32? {
            var i = Int(childBegin[state])
            let end = Int(childEnd[state])
            while i < end {
                if cls[i] == c { return Int32(i) }
                if cls[i] > c { return nil }
                i += 1
            }
            return nil
        }

        // Failure links and report links, breadth-first.
        var fail = [Int32](repeating: 0, count: stateCount)
        var report = [Int32](repeating: -1, count: stateCount)
        for state in 0..<stateCount {
            if state != 0 {
                report[state] = endHead[Int(order[state])] < 0 ? report[Int(fail[state])] : Int32(state)
            }
            for target in Int(childBegin[state])..<Int(childEnd[state]) {
                var link: Int32 = 0
                if state != 0 {
                    var candidate = Int(fail[state])
                    while true {
                        if let next = child(candidate, cls[target]) { link = next; break }
                        if candidate == 0 { break }
                        candidate = Int(fail[candidate])
                    }
                }
                fail[target] = link
            }
        }

        // The deepest level whose states all fit the dense budget.
        var denseCount = 1
        var level: Int32 = 1
        while denseCount < stateCount {
            var end = denseCount
            while end < stateCount && depth[end] == level { end += 1 }
            if end * Int(classCount) > Self.denseBudget { break }
            denseCount = end
            level += 1
        }
        self.denseCount = denseCount
        let sparseBase = Int32(denseCount) * classCount
        self.sparseBase = sparseBase
        func reference(_ state: Int32, withReport: Bool = true) -> Int32 {
            let base = state < Int32(denseCount) ? state * classCount : sparseBase + state - Int32(denseCount)
            return withReport && report[Int(state)] >= 0 ? base | Self.reportBit : base
        }

        // Dense rows: the failure state's row (already resolved: it is shallower), then the
        // state's own edges on top.
        var dense = [Int32](repeating: 0, count: denseCount * Int(classCount))
        for state in 0..<denseCount {
            let row = state * Int(classCount)
            if state != 0 {
                let failRow = Int(fail[state]) * Int(classCount)
                for c in 0..<Int(classCount) { dense[row + c] = dense[failRow + c] }
            }
            for target in Int(childBegin[state])..<Int(childEnd[state]) {
                dense[row + Int(cls[target])] = reference(Int32(target))
            }
        }

        var sparseStart: [Int32] = []
        var edgeClass: [Int32] = []
        var edgeTarget: [Int32] = []
        var sparseFail: [Int32] = []
        for state in denseCount..<stateCount {
            sparseStart.append(Int32(edgeClass.count))
            sparseFail.append(reference(fail[state], withReport: false))
            for target in Int(childBegin[state])..<Int(childEnd[state]) {
                edgeClass.append(cls[target])
                edgeTarget.append(reference(Int32(target)))
            }
        }
        sparseStart.append(Int32(edgeClass.count))

        // Each state's patterns in insertion order (the linked list holds them newest first).
        var outputStart: [Int32] = []
        var outputs: [Int32] = []
        outputStart.reserveCapacity(stateCount + 1)
        outputs.reserveCapacity(endPattern.count)
        for state in 0..<stateCount {
            outputStart.append(Int32(outputs.count))
            let first = outputs.count
            var e = endHead[Int(order[state])]
            while e >= 0 { outputs.append(endPattern[Int(e)]); e = endNext[Int(e)] }
            outputs[first...].reverse()
        }
        outputStart.append(Int32(outputs.count))

        var layout = Layout()
        var table: [Int32] = []
        func section(_ values: [Int32]) -> Int {
            defer { table.append(contentsOf: values) }
            return table.count
        }
        layout.classOf = section(classOf)
        layout.dense = section(dense)
        layout.sparseStart = section(sparseStart)
        layout.edgeClass = section(edgeClass)
        layout.edgeTarget = section(edgeTarget)
        layout.sparseFail = section(sparseFail)
        layout.stateFail = section(fail)
        layout.report = section(report)
        layout.outputStart = section(outputStart)
        layout.outputs = section(outputs)
        self.table = table
        self.layout = layout
    }

    /// Calls `body(pattern, start, end)` for every occurrence of every pattern in `text`, in order of
    /// `end`; `start..<end` are byte offsets. Overlapping occurrences are all reported.
    func forEachMatch(in text: UnsafeBufferPointer<UInt8>, _ body: (_ pattern: Int, _ start: Int, _ end: Int) -> Void) {
        if isEmpty || text.isEmpty { return }
        table.withUnsafeBufferPointer { table in
            let base = table.baseAddress!
            let classOf = base + layout.classOf
            let dense = base + layout.dense
            let sparseBase = self.sparseBase
            let input = text.baseAddress!
            let count = text.count
            var index = 0
            var reference: Int32 = 0  // a dense state at the top of the fast loop
            while index < count {
                var next: Int32
                (index, reference, next) = Self.denseRun(
                    input, from: index, to: count, classOf: classOf, dense: dense,
                    sparseBase: sparseBase, reference: reference)
                if next < sparseBase { break }
                // The slow path, a byte at a time until the automaton is back in a dense state.
                while true {
                    if next & Self.reportBit != 0 {
                        next &= ~Self.reportBit
                        report(reference: next, end: index, in: base, body)
                    }
                    if next < sparseBase || index == count { break }
                    next = sparseStep(from: next, classOf[Int(input[index])], in: base)
                    index += 1
                }
                reference = next
            }
        }
    }

    /// The fast loop: follows dense transitions from `reference` until the end of the input or a
    /// transition to a sparse state or one where a pattern ends. Returns the index after the last
    /// byte read, the last dense reference, and the transition that stopped the loop (a dense
    /// reference when the input ran out). Kept out of line and free of calls so that everything
    /// stays in registers.
    @inline(never)
    private static func denseRun(
        _ input: UnsafePointer<UInt8>, from start: Int, to count: Int,
        classOf: UnsafePointer<Int32>, dense: UnsafePointer<Int32>, sparseBase: Int32, reference: Int32
    ) -> (index: Int, reference: Int32, next: Int32) {
        var index = start
        var reference = reference
        while index < count {
            let next = dense[Int(reference &+ classOf[Int(input[index])])]
            index &+= 1
            if next >= sparseBase { return (index, reference, next) }
            reference = next
        }
        return (index, reference, reference)
    }

    /// The transition from a sparse state: its own edges, else its failure link's transition.
    private func sparseStep(from reference: Int32, _ cls: Int32, in base: UnsafePointer<Int32>) -> Int32 {
        if cls == 0 { return 0 }
        let sparseStart = base + layout.sparseStart
        let edgeClass = base + layout.edgeClass
        let edgeTarget = base + layout.edgeTarget
        let sparseFail = base + layout.sparseFail
        var current = reference
        while current >= sparseBase {
            let sparse = Int(current - sparseBase)
            var edge = Int(sparseStart[sparse])
            let last = Int(sparseStart[sparse + 1])
            while edge < last {
                if edgeClass[edge] == cls { return edgeTarget[edge] }
                edge += 1
            }
            current = sparseFail[sparse]
        }
        return base[layout.dense + Int(current + cls)]
    }

    /// Reports every pattern that ends in the state `reference` points to.
    private func report(
        reference: Int32, end: Int, in base: UnsafePointer<Int32>,
        _ body: (_ pattern: Int, _ start: Int, _ end: Int) -> Void
    ) {
        let state = reference < sparseBase
            ? Int(reference) / classCount : denseCount + Int(reference - sparseBase)
        let stateFail = base + layout.stateFail
        let report = base + layout.report
        let outputStart = base + layout.outputStart
        let outputs = base + layout.outputs
        var hit = Int(report[state])
        while hit >= 0 {
            for output in Int(outputStart[hit])..<Int(outputStart[hit + 1]) {
                let pattern = Int(outputs[output])
                body(pattern, end - patternLengths[pattern], end)
            }
            hit = Int(report[Int(stateFail[hit])])
        }
    }
}
