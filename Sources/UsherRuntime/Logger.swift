public import Foundation
import UsherJSON
import UsherStore

/// One line per event, logfmt (`ts=… level=info event=reply bot=support rule=refund`) or JSON.
/// Message text is never logged at info level; `--log-text` (debug) includes it.
///
/// Events that can repeat with every message (`regex-limit`) are throttled (`Throttle`): the
/// first of a key is written, the same key again within the interval is only counted, and the
/// next line written for it says how many were left out (`suppressed=N`).
public final class Logger: Sendable {
    public enum Format: String, Sendable, CaseIterable { case logfmt, json }
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var name: String { ["debug", "info", "warn", "error"][rawValue] }
    }

    /// Which events are written at most once per key and interval.
    public struct Throttle: Sendable {
        /// Event name → the fields whose values make its key (a field not given counts as empty).
        public var events: [String: [String]]
        public var interval: Duration

        public init(events: [String: [String]], interval: Duration) {
            self.events = events
            self.interval = interval
        }

        /// `regex-limit` once per bot, rule and minute: a catastrophic regex hits its limit on
        /// every long message, and a line per message said nothing new.
        /// The HTTP server's own messages (libmicrohttpd's, by their text; slow clients closed)
        /// once a minute: a flood of refused connections would otherwise write a line each.
        public static let standard = Throttle(events: ["regex-limit": ["bot", "rule"], "http-server": ["message"],
                                                       "http-exchange-timeout": []], interval: .seconds(60))
        /// Every event written.
        public static let none = Throttle(events: [:], interval: .zero)
    }

    /// A throttled key: when its last line was written, and how many were left out since.
    private struct Quiet {
        var writtenAt: Date
        var suppressed: Int
    }

    public let format: Format
    public let minimum: Level
    public let throttle: Throttle
    private let sink: @Sendable (String) -> Void
    private let now: @Sendable () -> Date
    private let quiet = Locked<[String: Quiet]>([:])
    private let lock = Locked(())

    /// Writes to standard error unless given a sink; `now` stamps lines and times the throttle.
    public init(format: Format = .logfmt, minimum: Level = .info, throttle: Throttle = .standard,
                now: @escaping @Sendable () -> Date = { Date() }, sink: (@Sendable (String) -> Void)? = nil) {
        self.format = format
        self.minimum = minimum
        self.throttle = throttle
        self.now = now
        self.sink = sink ?? { FileHandle.standardError.write(Data($0.utf8)) }
    }

    /// Whether events at `level` are written: check it before building costly fields.
    public func enabled(_ level: Level) -> Bool { level >= minimum }

    public func log(_ level: Level, _ event: String, _ fields: KeyValuePairs<String, Any?> = [:]) {
        guard level >= minimum else { return }
        log(level, event, pairs: fields.compactMap { k, v in v.map { (k, "\($0)") } })
    }

    /// One event with fields made at run time (a store's warning, `IntakeEnd`), in order.
    public func log(_ level: Level, _ event: String, pairs fields: [(String, String)]) {
        guard level >= minimum else { return }
        let time = now()
        var fields = fields
        if let keyFields = throttle.events[event] {
            let key = ([event] + keyFields.map { name in fields.first { $0.0 == name }?.1 ?? "" }).joined(separator: "\0")
            let interval = TimeInterval(throttle.interval.components.seconds)
                + TimeInterval(throttle.interval.components.attoseconds) / 1e18
            let suppressed: Int? = quiet.withLock { keys in
                // Keys carry free text (a library's message): forget the quiet ones past a bound.
                if keys.count > 1_000 { keys = keys.filter { time.timeIntervalSince($0.value.writtenAt) < interval } }
                if let q = keys[key], time.timeIntervalSince(q.writtenAt) < interval {
                    keys[key]!.suppressed += 1
                    return nil
                }
                let left = keys[key]?.suppressed ?? 0
                keys[key] = Quiet(writtenAt: time, suppressed: 0)
                return left
            }
            guard let suppressed else { return }
            if suppressed > 0 { fields.append(("suppressed", String(suppressed))) }
        }
        let ts = time.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
        let pairs: [(String, String)] = [("ts", ts), ("level", level.name), ("event", event)] + fields
        let line: String
        switch format {
        case .logfmt:
            line = pairs.map { "\($0.0)=\(Self.logfmtValue($0.1))" }.joined(separator: " ")
        case .json:
            let object = Dictionary(pairs, uniquingKeysWith: { _, b in b })
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            line = String(decoding: data, as: UTF8.self)
        }
        lock.withLock { _ in sink(line + "\n") }
    }

    public func info(_ event: String, _ fields: KeyValuePairs<String, Any?> = [:]) { log(.info, event, fields) }
    public func warning(_ event: String, _ fields: KeyValuePairs<String, Any?> = [:]) { log(.warning, event, fields) }
    public func error(_ event: String, _ fields: KeyValuePairs<String, Any?> = [:]) { log(.error, event, fields) }
    public func debug(_ event: String, _ fields: KeyValuePairs<String, Any?> = [:]) { log(.debug, event, fields) }

    /// A value as logfmt writes it: bare when it is plain, else quoted and escaped the way JSON
    /// escapes a string (`\"`, `\\`, `\n`, `\r`, `\t`, `\u0000` for every other control
    /// character). Values come from outside (conversation and message ids): a raw NUL, CR or
    /// newline in one would cut, forge or overwrite a line.
    static func logfmtValue(_ s: String) -> String {
        if !s.isEmpty, !s.utf8.contains(where: { $0 <= 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\\") }) {
            return s
        }
        var writer = JSONWriter(capacity: s.utf8.count + 8)
        writer.string(s)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
