import Foundation
import UsherRuntime
import UsherStore

/// Where the webhook's log events and counts go: into the worker's log and metrics once `usher
/// run` hands the worker over (`ServingStore.serve`); until then (and in the other commands)
/// warnings and errors to the store's warning callback, counts to metrics of its own.
final class WebhookEvents: Sendable {
    private let attached = Locked<(log: Logger, metrics: Metrics)?>(nil)
    private let own = Metrics()
    private let warn: (@Sendable (String, [(String, String)]) -> Void)?

    init(warn: (@Sendable (String, [(String, String)]) -> Void)?) { self.warn = warn }

    func attach(log: Logger, metrics: Metrics) { attached.withLock { $0 = (log, metrics) } }

    /// The metrics counted in.
    var metrics: Metrics { attached.withLock { $0?.metrics } ?? own }

    func log(_ level: Logger.Level, _ event: String, _ fields: [(String, String)]) {
        if let log = attached.withLock({ $0?.log }) {
            log.log(level, event, pairs: fields)
        } else if level >= .warning {
            warn?(event, fields)
        }
    }

    func info(_ event: String, _ fields: [(String, String)]) { log(.info, event, fields) }
    func warning(_ event: String, _ fields: [(String, String)]) { log(.warning, event, fields) }
    func error(_ event: String, _ fields: [(String, String)]) { log(.error, event, fields) }

    /// Adds one to a counter, with a `result` label when given.
    func count(_ name: String, result: String? = nil) {
        if let result { metrics.increment(name, ["result": result]) } else { metrics.increment(name) }
    }
}
