/// A small, strict command-line parser: `--name value`, `--name=value`, flags, positionals.
/// Unknown options are usage errors (exit 64), never ignored.
struct Arguments {
    private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Parses `args` given the options that take a value and the flags.
    init(_ args: [String], options: Set<String>, flags allowedFlags: Set<String>) throws(UsageError) {
        var i = 0
        var onlyPositionals = false
        while i < args.count {
            let a = args[i]
            i += 1
            if onlyPositionals || !a.hasPrefix("-") || a == "-" {
                positionals.append(a)
                continue
            }
            if a == "--" { onlyPositionals = true; continue }
            var name = a
            var inline: String?
            if let eq = a.firstIndex(of: "=") {
                name = String(a[..<eq])
                inline = String(a[a.index(after: eq)...])
            }
            if allowedFlags.contains(name) {
                if inline != nil { throw UsageError("\(name) takes no value") }
                flags.insert(name)
            } else if options.contains(name) {
                if let inline {
                    values[name, default: []].append(inline)
                } else {
                    guard i < args.count else { throw UsageError("\(name) needs a value") }
                    values[name, default: []].append(args[i])
                    i += 1
                }
            } else {
                let all = Array(options) + Array(allowedFlags)
                let hint = Suggestion.closest(to: name, in: all).map { "; did you mean \($0)?" } ?? ""
                throw UsageError("unknown option \(name)\(hint)")
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }

    func int(_ name: String) throws(UsageError) -> Int? {
        guard let v = value(name) else { return nil }
        guard let n = Int(v) else { throw UsageError("\(name) needs a whole number, got '\(v)'") }
        return n
    }

    func choice(_ name: String, _ allowed: [String], default d: String) throws(UsageError) -> String {
        guard let v = value(name) else { return d }
        guard allowed.contains(v) else { throw UsageError("\(name) must be one of \(allowed.joined(separator: ", ")), got '\(v)'") }
        return v
    }
}

/// A mistake in how a command was called: exit 64, one line naming it (and `--help`). Or, with another
/// `status`, something that failed although the command line was right: printed without the
/// help, exit 1 (a store that cannot be opened) or 69 (its server is not up yet).
struct UsageError: Error {
    let message: String
    var status: ExitCode = .usage
    init(_ message: String) { self.message = message }

    var isFailure: Bool { status != .usage }
    /// A store that failed to open because its server is not up yet: `usher run` waits for it.
    var serverNotUp: Bool { status == .unavailable }

    static func failure(_ message: String, status: ExitCode = .failure) -> UsageError {
        var e = UsageError(message)
        e.status = status
        return e
    }
}

import UsherDiagnostics
