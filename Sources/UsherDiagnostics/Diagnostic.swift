/// One problem found in a user's file: a value, collected with all the others of a run.
public struct Diagnostic: Sendable, Hashable {
    /// How serious a problem is.
    public enum Severity: String, Sendable, Hashable, Comparable {
        case error, warning, note

        private var rank: Int { self == .error ? 0 : self == .warning ? 1 : 2 }
        public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
    }

    /// A secondary location that explains the main one ("first defined here").
    public struct Note: Sendable, Hashable {
        public var message: String
        public var location: SourceLocation?
        public init(_ message: String, at location: SourceLocation? = nil) {
            self.message = message
            self.location = location
        }
    }

    public var severity: Severity
    /// A stable, kebab-case code (`unknown-key`) that tools and tests can rely on.
    public var code: String
    /// What is wrong and, where it can say, how to fix it.
    public var message: String
    /// Where; `nil` only for problems that belong to no file (a missing file is located at it).
    public var location: SourceLocation?
    public var notes: [Note]

    public init(_ severity: Severity, _ code: String, _ message: String,
                at location: SourceLocation?, notes: [Note] = []) {
        self.severity = severity
        self.code = code
        self.message = message
        self.location = location
        self.notes = notes
    }

    public static func error(_ code: String, _ message: String, at location: SourceLocation?,
                             notes: [Note] = []) -> Diagnostic {
        Diagnostic(.error, code, message, at: location, notes: notes)
    }

    public static func warning(_ code: String, _ message: String, at location: SourceLocation?,
                               notes: [Note] = []) -> Diagnostic {
        Diagnostic(.warning, code, message, at: location, notes: notes)
    }

    /// The one-line form: `file:line:col: error: [code] message`.
    public var headline: String {
        let place = location.map { "\($0): " } ?? ""
        return "\(place)\(severity.rawValue): [\(code)] \(message)"
    }
}

extension Array where Element == Diagnostic {
    /// Whether any diagnostic is an error.
    public var hasErrors: Bool { contains { $0.severity == .error } }

    /// Sorted by file, line, column, then severity — the order a compiler prints them in.
    public func sortedForDisplay() -> [Diagnostic] {
        enumerated().sorted { l, r in
            let a = l.element, b = r.element
            switch (a.location, b.location) {
            case let (x?, y?) where x != y: return x < y
            case (nil, _?): return true
            case (_?, nil): return false
            default: return a.severity == b.severity ? l.offset < r.offset : a.severity < b.severity
            }
        }.map(\.element)
    }
}
