import Foundation
import UsherStore

/// One line per event, logfmt (`ts=… level=info event=reply bot=support rule=refund`) or JSON.
/// Message text is never logged at info level; `--log-text` (debug) includes it.
public final class Logger: Sendable {
    public enum Format: String, Sendable, CaseIterable { case logfmt, json }
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var name: String { ["debug", "info", "warn", "error"][rawValue] }
    }

    public let format: Format
    public let minimum: Level
    private let sink: @Sendable (String) -> Void
    private let lock = Locked(())

    /// Writes to standard error unless given a sink.
    public init(format: Format = .logfmt, minimum: Level = .info, sink: (@Sendable (String) -> Void)? = nil) {
        self.format = format
        self.minimum = minimum
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
        let ts = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
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

    static func logfmtValue(_ s: String) -> String {
        if !s.isEmpty, !s.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) { return s }
        return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }
}
