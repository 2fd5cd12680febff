internal import CPCRE2

/// A compiled PCRE2 pattern in UTF and UCP mode, JIT-compiled when the platform allows.
///
/// `@unchecked Sendable`: PCRE2 documents compiled code (JIT code included) as read-only once
/// compiled and safe to use from several threads at once, and the match context here is never
/// changed after `init`. What is per match — the match data with its ovector and backtracking
/// frames — is created for each call and never shared.
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
    public private(set) var matchesEmpty = false

    private let code: OpaquePointer
    private let context: OpaquePointer
    /// (name, group number) in name-table order; a name may repeat with `(?J)` or `(?|`.
    private let groups: [(name: String, number: Int)]
    private let syntax: PatternSyntax?

    /// Compiles `source`, throwing PCRE2's message and the offset in Unicode scalars on error.
    public init(_ source: String, limits: PatternLimits = .default) throws(PatternError) {
        self.source = source
        self.limits = limits
        var errorCode: Int32 = 0
        var errorOffset = 0
        let options = PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C
        let compiled = source.withUTF8Bytes { bytes in
            withNonNullBase(bytes) { base, count in
                pcre2_compile_8(base, count, options, &errorCode, &errorOffset, nil)
            }
        }
        guard let compiled else {
            let scalars = source.utf8.prefix(errorOffset).reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
            throw PatternError(message: Self.errorMessage(errorCode), offset: scalars)
        }
        guard let context = pcre2_match_context_create_8(nil) else {
            pcre2_code_free_8(compiled)
            throw PatternError(message: "out of memory", offset: 0)
        }
        code = compiled
        self.context = context
        pcre2_set_match_limit_8(context, limits.matchLimit)
        pcre2_set_depth_limit_8(context, limits.depthLimit)
        pcre2_set_heap_limit_8(context, limits.heapLimitKiB)
        isJIT = pcre2_jit_compile_8(compiled, PCRE2_JIT_COMPLETE) == 0

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
        syntax = PatternSyntax(source)
        if case .match = match("") { matchesEmpty = true }
    }

    deinit {
        pcre2_match_context_free_8(context)
        pcre2_code_free_8(code)
    }

    /// True for a repetition of something that itself repeats, like `(a+)+` or `(\w+\s?)*`, which
    /// can backtrack exponentially. A syntactic check: `(a|aa)+` is not caught, and a group whose
    /// first or last character cannot be matched by its inner repetitions (`([a-z]+\.)+`) is
    /// not flagged because it splits text only one way.
    public var hasNestedUnboundedQuantifier: Bool { syntax?.hasNestedQuantifier ?? false }

    /// If non-nil, every match implies that at least one of these literals occurs in the text
    /// (compare ASCII letters case-insensitively); nil when no such set is known.
    public var requiredLiterals: [String]? { syntax?.requiredLiterals }

    /// Runs the pattern over `text`.
    public func match(_ text: String) -> PatternMatch {
        // Swift strings are valid UTF-8, so PCRE2 need not check.
        text.withUTF8Bytes { run($0, options: PCRE2_NO_UTF_CHECK) }
    }

    /// Runs the pattern over UTF-8 bytes; invalid UTF-8 gives `.noMatch`.
    public func match(utf8 text: UnsafeBufferPointer<UInt8>) -> PatternMatch {
        run(text, options: 0)
    }

    private func run(_ text: UnsafeBufferPointer<UInt8>, options: UInt32) -> PatternMatch {
        guard let data = pcre2_match_data_create_from_pattern_8(code, nil) else { return .limitHit("heap limit") }
        defer { pcre2_match_data_free_8(data) }
        let result = withNonNullBase(text) { base, count in
            var result = pcre2_match_8(code, base, count, 0, options, data, context)
            if result == PCRE2_ERROR_JIT_STACKLIMIT {
                // The JIT stack is small and fixed; the interpreter's depth and heap limits bound
                // the rerun instead.
                result = pcre2_match_8(code, base, count, 0, options | PCRE2_NO_JIT, data, context)
            }
            return result
        }
        switch result {
        case PCRE2_ERROR_NOMATCH:
            return .noMatch
        case PCRE2_ERROR_MATCHLIMIT:
            return .limitHit("match limit")
        case PCRE2_ERROR_DEPTHLIMIT:
            return .limitHit("depth limit")
        case PCRE2_ERROR_HEAPLIMIT, PCRE2_ERROR_NOMEMORY:
            return .limitHit("heap limit")
        case PCRE2_ERROR_UTF8_ERR21...PCRE2_ERROR_UTF8_ERR1:
            return .noMatch
        case ..<0:
            return .limitHit(Self.errorMessage(result))
        default:
            break
        }
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
        return .match(captures: captures)
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
