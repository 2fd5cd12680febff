internal import CPCRE2

/// A compiled PCRE2 pattern in UTF and UCP mode, JIT-compiled when the platform allows.
///
/// `@unchecked Sendable`: pcre2api(3), "Multithreading": a compiled pattern "is thread-safe, that
/// is, the same compiled pattern can be used by more than one thread simultaneously" (JIT
/// compilation happens once, in `init`). What must be per thread is per call or per thread: the
/// match data (ovector and backtracking frames) is created for each call, the match context
/// (whose limits are set for each call) and the deadline live in the calling thread's
/// `MatchClock`, and the JIT stack is PCRE2's default 32 KiB on the calling thread's own stack.
///
/// Limits: PCRE2 counts its match limit afresh at every start position, so on a long message a
/// pattern that does just under the limit's work at each position could run for seconds. Each
/// pattern is therefore compiled twice: as written, for messages up to `guardedLength` bytes
/// (where positions × match limit stays small), and with a callout, `(?C255)`, at its start
/// (after any `(*UTF)`-style options), which PCRE2 calls at each start position it tries and which
/// ends the match once its deadline has passed. The callout costs some 30 ns per position tried
/// and can turn off PCRE2's fastest start-of-match scanning, hence not always.
///
/// A budgeted match (`match(_:deadline:clock:)`, the engine's) also bounds the work at one start
/// position, which the match limit alone does not bound in time (one step can scan the whole
/// message): it runs in slices of the match limit, the first small, each next one as large as
/// the time the last one took says still fits before the deadline, resuming where the last one
/// stopped; a slice that cannot grow gives up with `.outOfTime`.
public final class Pattern: @unchecked Sendable {
    /// The pattern as written.
    public let source: String
    /// The named groups, in group-number order.
    public let captureNames: [String]
    /// The limits every match runs under.
    public let limits: PatternLimits
    /// True when the pattern runs as JIT code.
    public let isJIT: Bool
    /// True if the pattern matches the empty string (it would fire on an empty message).
    public let matchesEmpty: Bool

    /// Subjects longer than this run the code with the start callout.
    static let guardedLength = 256

    private let code: OpaquePointer
    /// The same pattern with the start callout; nil if it did not compile (never seen).
    private let guardedCode: OpaquePointer?
    /// Whether a match that hit a slice's limit may go on from the start position where it
    /// stopped: not with `\G` (it asserts the start offset) or backtracking verbs like (*SKIP)
    /// (they choose where the next attempt starts).
    private let resumable: Bool
    /// (name, group number) in name-table order; a name may repeat with `(?J)` or `(?|`.
    private let groups: [(name: String, number: Int)]
    private let syntax: PatternSyntax?

    private static let options = PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C

    /// Compiles `source`, throwing PCRE2's message and the offset in Unicode scalars on error.
    public init(_ source: String, limits: PatternLimits = .default) throws(PatternError) {
        self.source = source
        self.limits = limits
        var errorCode: Int32 = 0
        var errorOffset = 0
        guard let compiled = Self.compile(source, &errorCode, &errorOffset) else {
            let scalars = source.utf8.prefix(errorOffset).reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
            throw PatternError(message: Self.errorMessage(errorCode), offset: scalars)
        }
        code = compiled
        guardedCode = Self.compile(Self.withStartCallout(source), &errorCode, &errorOffset)
        resumable = !source.contains("\\G") && !source.contains("(*")
        isJIT = pcre2_jit_compile_8(compiled, PCRE2_JIT_COMPLETE) == 0
        if let guardedCode { _ = pcre2_jit_compile_8(guardedCode, PCRE2_JIT_COMPLETE) }

        var nameCount: UInt32 = 0
        var entrySize: UInt32 = 0
        var table: UnsafePointer<UInt8>?
        pcre2_pattern_info_8(compiled, UInt32(PCRE2_INFO_NAMECOUNT), &nameCount)
        pcre2_pattern_info_8(compiled, UInt32(PCRE2_INFO_NAMEENTRYSIZE), &entrySize)
        pcre2_pattern_info_8(compiled, UInt32(PCRE2_INFO_NAMETABLE), &table)
        var groups: [(name: String, number: Int)] = []
        if let table {
            for entry in 0..<Int(nameCount) {
                let start = table + entry * Int(entrySize)
                let number = Int(start[0]) << 8 | Int(start[1])
                let name = String(cString: start + 2)
                groups.append((name, number))
            }
        }
        self.groups = groups
        var names: [String] = []
        for group in groups.sorted(by: { $0.number < $1.number }) where !names.contains(group.name) {
            names.append(group.name)
        }
        captureNames = names
        let empty = Self.run(code: compiled, limits: limits, matchLimit: limits.matchLimit, groups: groups,
                             text: UnsafeBufferPointer(start: nil, count: 0), from: 0, options: 0, deadline: nil)
        matchesEmpty = if case .match = empty.result { true } else { false }
        syntax = PatternSyntax(source)
    }

    deinit {
        pcre2_code_free_8(code)
        if let guardedCode { pcre2_code_free_8(guardedCode) }
    }

    /// True for a pattern that can backtrack exponentially (or polynomially, to a high degree): a
    /// repetition of something that itself repeats, like `(a+)+` or `(\w+\s?)*`; an unbounded
    /// repetition of alternatives that can match the same text, like `(a|aa)+` or `(\w|\d)+`;
    /// three or more fixed repetitions of a part with an unbounded repeat, like `(.*a){12}`. A
    /// syntactic check: a group whose first or last character cannot be matched by its inner
    /// repetitions (`([a-z]+\.)+`) is not flagged because it splits text only one way.
    public var hasNestedUnboundedQuantifier: Bool { backtrackingRisk != nil }

    /// Which catastrophic shape the pattern has, if `hasNestedUnboundedQuantifier`.
    public var backtrackingRisk: BacktrackingRisk? { syntax?.backtrackingRisk }

    /// If non-nil, every match implies that at least one of these literals occurs in the text
    /// (compare ASCII letters case-insensitively); nil when no such set is known.
    public var requiredLiterals: [String]? { syntax?.requiredLiterals }

    /// Runs the pattern over `text`.
    public func match(_ text: String) -> PatternMatch {
        // Swift strings are valid UTF-8, so PCRE2 need not check.
        text.withUTF8Bytes { match($0, options: PCRE2_NO_UTF_CHECK) }
    }

    /// Runs the pattern over UTF-8 bytes; invalid UTF-8 gives `.noMatch`.
    public func match(utf8 text: UnsafeBufferPointer<UInt8>) -> PatternMatch {
        match(text, options: 0)
    }

    /// Runs the pattern over `text`, giving up with `.outOfTime` once `clock` reads `deadline`
    /// (or already reads it), within the pattern's own limits. Counts as no match either way.
    public func match(_ text: String, deadline: Duration, clock: MonotonicClock) -> PatternMatch {
        text.withUTF8Bytes { match($0, options: PCRE2_NO_UTF_CHECK, deadline: deadline, clock: clock) }
    }

    private func match(_ text: UnsafeBufferPointer<UInt8>, options: UInt32) -> PatternMatch {
        let guarded = text.count > Self.guardedLength ? guardedCode : nil
        let deadline = guarded.map { _ in (MonotonicClock.system.now() + limits.timeLimit, MonotonicClock.system) }
        let run = Self.run(code: guarded ?? code, limits: limits, matchLimit: limits.matchLimit, groups: groups, text: text,
                           from: 0, options: options, deadline: deadline)
        return run.expired ? .limitHit("time limit") : run.result
    }

    /// The first slice's match limit: a few hundred microseconds of the slowest steps seen.
    static let firstSlice = 10_000
    /// How much larger each next slice may be, at most.
    static let sliceGrowth = 4

    private func match(_ text: UnsafeBufferPointer<UInt8>, options: UInt32, deadline budget: Duration,
                       clock: MonotonicClock) -> PatternMatch {
        var now = clock.now()
        // The pattern's own time limit may come first; then running out is its "time limit".
        let own = now + limits.timeLimit
        let deadline = min(budget, own)
        let expiry: PatternMatch = budget <= own ? .outOfTime : .limitHit("time limit")
        guard now < deadline else { return expiry }
        let ceiling = Int(limits.matchLimit)
        var slice = min(ceiling, Self.firstSlice)
        var guarded = text.count > Self.guardedLength && guardedCode != nil
        var from = 0
        var every = MatchClock.readEvery
        while true {
            let started = now
            let run = Self.run(code: guarded ? guardedCode! : code, limits: limits, matchLimit: UInt32(slice), groups: groups,
                               text: text, from: from, options: options, deadline: guarded ? (deadline, clock) : nil, every: every)
            if run.expired { return expiry }
            guard run.result == .limitHit("match limit"), slice < ceiling else { return run.result }
            // The slice ran out at one start position: go on from there with a larger slice, as
            // large as the time this one took says fits in what is left.
            now = clock.now()
            let left = deadline - now
            guard left > .zero else { return expiry }
            var next = min(ceiling, slice * Self.sliceGrowth)
            let spent = now - started
            if spent > .zero, spent * (Double(next) / Double(slice)) > left {
                next = min(next, Int(Double(slice) * (left / spent)))
            }
            guard next > slice else { return expiry }
            from = guarded && resumable ? run.lastStart : 0
            // From the second slice on, the code with the callout, which reads the clock at
            // every start position: a slow position is known to be there.
            if guardedCode != nil { guarded = true; every = 1 }
            slice = next
        }
    }

    private static func compile(_ source: String, _ errorCode: inout Int32, _ errorOffset: inout Int) -> OpaquePointer? {
        source.withUTF8Bytes { bytes in
            withNonNullBase(bytes) { base, count in
                pcre2_compile_8(base, count, options, &errorCode, &errorOffset, nil)
            }
        }
    }

    /// `source` with the start callout after its leading `(*UTF)`-style options.
    private static func withStartCallout(_ source: String) -> String {
        let bytes = Array(source.utf8)
        var offset = 0
        // Options such as (*UTF), (*NO_JIT), (*LIMIT_MATCH=100) are only allowed at the very start.
        while offset + 2 < bytes.count && bytes[offset] == UInt8(ascii: "(") && bytes[offset + 1] == UInt8(ascii: "*") {
            var end = offset + 2
            while end < bytes.count && (bytes[end] == UInt8(ascii: "_") || (bytes[end] >= 0x41 && bytes[end] <= 0x5A)) {
                end += 1
            }
            if end < bytes.count && bytes[end] == UInt8(ascii: "=") {
                end += 1
                while end < bytes.count && bytes[end] >= 0x30 && bytes[end] <= 0x39 { end += 1 }
            }
            guard end > offset + 2, end < bytes.count, bytes[end] == UInt8(ascii: ")") else { break }
            offset = end + 1
        }
        return String(decoding: bytes[..<offset], as: UTF8.self) + "(?C255)"
            + String(decoding: bytes[offset...], as: UTF8.self)
    }

    /// What one call of `pcre2_match` came to: the result, whether the callout's deadline
    /// ended it, and the last start position the callout saw.
    private struct Run {
        var result: PatternMatch
        var expired = false
        var lastStart = 0
    }

    /// One call from start position `from`, with `matchLimit` and the pattern's other limits;
    /// the callout (when `code` has it) ends it once `deadline`'s clock reads its time.
    private static func run(
        code: OpaquePointer, limits: PatternLimits, matchLimit: UInt32, groups: [(name: String, number: Int)],
        text: UnsafeBufferPointer<UInt8>, from: Int, options: UInt32, deadline: (Duration, MonotonicClock)?,
        every: Int = MatchClock.readEvery
    ) -> Run {
        guard let data = pcre2_match_data_create_from_pattern_8(code, nil) else { return Run(result: .limitHit("heap limit")) }
        defer { pcre2_match_data_free_8(data) }
        let thread = MatchClock.current
        let context = thread.pointee.context
        pcre2_set_match_limit_8(context, matchLimit)
        pcre2_set_depth_limit_8(context, limits.depthLimit)
        pcre2_set_heap_limit_8(context, limits.heapLimitKiB)
        thread.pointee.start(deadline: deadline?.0 ?? .zero, clock: deadline?.1, every: every)
        let result = withNonNullBase(text) { base, count in
            var result = pcre2_match_8(code, base, count, from, options, data, context)
            if result == PCRE2_ERROR_JIT_STACKLIMIT {
                // The JIT stack is small and fixed; the interpreter's depth and heap limits bound
                // the rerun instead.
                result = pcre2_match_8(code, base, count, from, options | PCRE2_NO_JIT, data, context)
            }
            return result
        }
        let state = thread.pointee
        thread.pointee.start(deadline: .zero, clock: nil, every: MatchClock.readEvery)   // holds no clock between calls
        if state.expired { return Run(result: .outOfTime, expired: true, lastStart: state.lastStart) }
        var run = Run(result: .noMatch, lastStart: state.lastStart)
        switch result {
        case PCRE2_ERROR_NOMATCH:
            return run
        case PCRE2_ERROR_MATCHLIMIT:
            run.result = .limitHit("match limit")
        case PCRE2_ERROR_DEPTHLIMIT:
            run.result = .limitHit("depth limit")
        case PCRE2_ERROR_HEAPLIMIT, PCRE2_ERROR_NOMEMORY:
            run.result = .limitHit("heap limit")
        case PCRE2_ERROR_UTF8_ERR21...PCRE2_ERROR_UTF8_ERR1:
            break
        case ..<0:
            run.result = .limitHit(errorMessage(result))
        default:
            var captures: [String: String] = [:]
            let ovector = pcre2_get_ovector_pointer_8(data)!
            let pairs = Int(pcre2_get_ovector_count_8(data))
            for group in groups where group.number < pairs && captures[group.name] == nil {
                let start = ovector[2 * group.number]
                let end = ovector[2 * group.number + 1]
                // An unset group reads as PCRE2_UNSET, which is -1 as an Int.
                guard start >= 0, start <= end, end <= text.count else { continue }
                captures[group.name] = String(decoding: UnsafeBufferPointer(rebasing: text[start..<end]), as: UTF8.self)
            }
            run.result = .match(captures: captures)
        }
        return run
    }

    private static func errorMessage(_ code: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = pcre2_get_error_message_8(code, &buffer, buffer.count)
        return length > 0 ? String(decoding: buffer[..<Int(length)], as: UTF8.self) : "PCRE2 error \(code)"
    }
}

/// PCRE2 wants a real pointer even for an empty subject or pattern.
private func withNonNullBase<Result>(
    _ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafePointer<UInt8>, Int) -> Result
) -> Result {
    if let base = bytes.baseAddress { return body(base, bytes.count) }
    var empty: UInt8 = 0
    return body(&empty, 0)
}
