import Foundation
import UsherStore

/// The worker's Prometheus metrics: counters, gauges and histograms with labels, rendered in the
/// text exposition format. One lock; updates are a dictionary write.
public final class Metrics: Sendable {
    /// A metric and its labels, sorted by key. Labels come in as `KeyValuePairs` and are kept
    /// as an array: a dictionary per update (built at the call, hashed element by element) cost
    /// more than the rest of recording a decision.
    private struct Series: Hashable {
        var name: String
        var labels: [Label]

        init(_ name: String, _ labels: KeyValuePairs<String, String>) {
            self.name = name
            self.labels = labels.map { Label(key: $0.key, value: $0.value) }
            if self.labels.count > 1 { self.labels.sort { $0.key < $1.key } }
        }
    }

    private struct Label: Hashable {
        var key: String
        var value: String
    }

    /// Counts per bucket (not cumulative: an observation adds to one bucket), summed up when
    /// rendered.
    private struct Histogram {
        var counts = [Int](repeating: 0, count: Metrics.latencyBuckets.count)
        var sum: Double = 0
        var count: Int = 0

        mutating func add(_ value: Double) {
            if let i = Metrics.latencyBuckets.firstIndex(where: { value <= $0 }) { counts[i] += 1 }
            sum += value
            count += 1
        }
    }

    private struct State {
        var counters: [Series: Double] = [:]
        var gauges: [Series: Double] = [:]
        var histograms: [Series: Histogram] = [:]
    }

    /// Latency buckets in seconds: 50 µs to 10 s.
    public static let latencyBuckets: [Double] = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                  0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private static let help: [String: (type: String, help: String)] = [
        "usher_messages_total": ("counter", "Inbound messages decided, by bot and sender."),
        "usher_replies_total": ("counter", "Bot replies written, by bot and rule."),
        "usher_system_messages_total": ("counter", "System notices written, by bot and rule."),
        "usher_handoffs_total": ("counter", "Handoffs to agents, by bot, rule and reason."),
        "usher_notifications_total": ("counter", "Agent notifications raised, by bot and queue."),
        "usher_commits_total": ("counter", "Store commits, by bot and result."),
        "usher_store_errors_total": ("counter", "Store operations that failed, by bot and code."),
        "usher_regex_limit_hits_total": ("counter", "Regexes that hit a match, depth, heap or time limit, by bot and rule."),
        "usher_truncated_messages_total": ("counter", "Messages longer than the matching cap, by bot."),
        "usher_decision_budget_exhausted_total": ("counter", "Decisions that spent their time budget (limits.decision_budget), by bot."),
        "usher_rules_last_reload_successful": ("gauge", "1 if the last rule reload of the bot succeeded, 0 if the running rules are older than the files."),
        "usher_rules_info": ("gauge", "The rule-set version each bot is running (value 1; only the live version has a series)."),
        "usher_ready": ("gauge", "1 while /readyz says ready: caught up with the store, and the store not failing."),
        "usher_decision_seconds": ("histogram", "Time to decide one message."),
        "usher_end_to_end_seconds": ("histogram", "From a message stored to its effects committed."),
        "usher_rescans_total": ("counter", "Rereads of messages a shared worker passed over (another worker's, not yet done), by bot."),
        "usher_webhook_requests_total": ("counter", "Requests to the webhook listener, by path."),
        "usher_webhook_refused_total": ("counter", "Webhook requests refused, by HTTP status."),
        "usher_webhook_messages_total": ("counter", "Messages the webhook took in, by result (accepted, duplicate)."),
        "usher_webhook_deliveries_total": ("counter", "Calls to the backend, by result (delivered; settled: found made already by the check before a repeat; retried; deadlettered)."),
        "usher_webhook_deadletters_total": ("counter", "Calls given up on and moved to the dead letters."),
    ]

    /// Info gauges: setting one series drops the others that agree on the named label. A bot
    /// runs one rule-set version at a time, so the versions it ran before must not still read 1.
    private static let oneSeriesPer: [String: String] = ["usher_rules_info": "bot"]

    private let state = Locked(State())

    public init() {}

    public func increment(_ name: String, _ labels: KeyValuePairs<String, String> = [:], by value: Double = 1) {
        let key = Series(name, labels)
        state.withLock { $0.counters[key, default: 0] += value }
    }

    public func set(_ name: String, _ labels: KeyValuePairs<String, String> = [:], to value: Double) {
        let key = Series(name, labels)
        let exclusive = Self.oneSeriesPer[name].flatMap { label in key.labels.first { $0.key == label } }
        state.withLock { s in
            if let exclusive {
                for other in s.gauges.keys where other.name == name && other != key && other.labels.contains(exclusive) {
                    s.gauges[other] = nil
                }
            }
            s.gauges[key] = value
        }
    }

    public func observe(_ name: String, _ labels: KeyValuePairs<String, String> = [:], _ value: Double) {
        let key = Series(name, labels)
        // One lookup, changed in place.
        state.withLock { $0.histograms[key, default: Histogram()].add(value) }
    }

    /// Several observations of one series at once (a worker's batch): one lookup.
    public func observe(_ name: String, _ labels: KeyValuePairs<String, String> = [:], values: [Double]) {
        if values.isEmpty { return }
        let key = Series(name, labels)
        state.withLock { s in
            var h = s.histograms.removeValue(forKey: key) ?? Histogram()
            for v in values { h.add(v) }
            s.histograms[key] = h
        }
    }

    /// The current value of a counter or gauge (tests, `/readyz`).
    public func value(_ name: String, _ labels: KeyValuePairs<String, String> = [:]) -> Double? {
        let key = Series(name, labels)
        return state.withLock { s in
            return s.counters[key] ?? s.gauges[key] ?? s.histograms[key].map { Double($0.count) }
        }
    }

    /// Prometheus text exposition format 0.0.4.
    public func render() -> String {
        let snapshot = state.withLock { $0 }
        var byName: [String: [String]] = [:]
        func labels(_ l: [Label], extra: (String, String)? = nil) -> String {
            var parts = l.map { "\($0.key)=\"\(Self.escape($0.value))\"" }
            if let (k, v) = extra { parts.append("\(k)=\"\(v)\"") }
            return parts.isEmpty ? "" : "{" + parts.joined(separator: ",") + "}"
        }
        for (k, v) in snapshot.counters { byName[k.name, default: []].append("\(k.name)\(labels(k.labels)) \(Self.number(v))") }
        for (k, v) in snapshot.gauges { byName[k.name, default: []].append("\(k.name)\(labels(k.labels)) \(Self.number(v))") }
        for (k, h) in snapshot.histograms {
            var lines: [String] = []
            var cumulative = 0
            for (i, bound) in Self.latencyBuckets.enumerated() {
                cumulative += h.counts[i]
                lines.append("\(k.name)_bucket\(labels(k.labels, extra: ("le", Self.number(bound)))) \(cumulative)")
            }
            lines.append("\(k.name)_bucket\(labels(k.labels, extra: ("le", "+Inf"))) \(h.count)")
            lines.append("\(k.name)_sum\(labels(k.labels)) \(Self.number(h.sum))")
            lines.append("\(k.name)_count\(labels(k.labels)) \(h.count)")
            byName[k.name, default: []].append(lines.joined(separator: "\n"))
        }
        var out = ""
        for name in byName.keys.sorted() {
            if let meta = Self.help[name] {
                out += "# HELP \(name) \(meta.help)\n# TYPE \(name) \(meta.type)\n"
            }
            out += byName[name]!.sorted().joined(separator: "\n") + "\n"
        }
        return out
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }
}
