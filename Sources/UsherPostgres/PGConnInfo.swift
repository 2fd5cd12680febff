import CLibPQ
import Foundation

/// The connection settings Usher gives a store URL that does not give them itself.
///
/// libpq's own defaults wait for ever: no connect timeout, and TCP keepalives only after the
/// system's two idle hours. A server that vanishes without closing its connections — a host
/// powered off, a network split, a NAT or load balancer that forgets an idle connection, as
/// cloud ones do after 4–6 minutes — then leaves a worker waiting on a dead socket: a commit
/// that never ends, or a LISTEN connection that hears nothing and says nothing. With these,
/// every such wait ends in a transient error within a minute, and the worker connects again.
/// (Over a Unix socket libpq ignores the TCP ones.)
package enum PGConnInfo {
    /// Each setting, as libpq names it, with Usher's value.
    package static let defaults: [(keyword: String, value: String)] = [
        // Connecting (each host of the URL in turn) gives up after 10 s.
        ("connect_timeout", "10"),
        // A silent connection is probed after 30 s (well inside the idle timeouts of NATs and
        // load balancers, which the probes also keep the connection open through), every 10 s;
        // three unanswered probes end it: a dead peer is found within a minute.
        ("keepalives_idle", "30"),
        ("keepalives_interval", "10"),
        ("keepalives_count", "3"),
        // Data sent and not acknowledged for 60 s (a commit into a network split) ends it too.
        ("tcp_user_timeout", "60000"),
    ]

    /// `url` (a `postgres://` URL or a `key=value` string) with each of `defaults` that neither
    /// it nor `environment` (libpq's variable for the setting, as `PGCONNECT_TIMEOUT`) sets.
    /// Unchanged when it names a service (`service=`, `PGSERVICE`: the service file may set
    /// them) or libpq cannot parse it (connecting then says why).
    package static func withDefaults(_ url: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        guard let given = options(url) else { return url }
        if given["service"] != nil || !(environment["PGSERVICE"] ?? "").isEmpty { return url }
        let variables = environmentVariables()
        var added: [(String, String)] = []
        for (keyword, value) in defaults where given[keyword] == nil {
            if let v = variables[keyword], !(environment[v] ?? "").isEmpty { continue }
            // Keepalives turned off in the URL stay off.
            if keyword.hasPrefix("keepalives_"), given["keepalives"] == "0" { continue }
            added.append((keyword, value))
        }
        if added.isEmpty { return url }
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            let pairs = added.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            let separator = !url.contains("?") ? "?" : (url.hasSuffix("?") || url.hasSuffix("&") ? "" : "&")
            return url + separator + pairs
        }
        // First: a value at the end of the string may end in a backslash, which would escape a
        // space after it; a keyword given twice takes its later value, the string's own.
        return added.map { "\($0.0)=\($0.1) " }.joined() + url
    }

    /// The settings `conninfo` gives, by keyword (nil: libpq cannot parse it).
    static func options(_ conninfo: String) -> [String: String]? {
        var error: UnsafeMutablePointer<CChar>?
        guard let parsed = PQconninfoParse(conninfo, &error) else {
            if let error { PQfreemem(error) }
            return nil
        }
        defer { PQconninfoFree(parsed) }
        return values(parsed)
    }

    /// Which environment variable libpq reads each setting from, by keyword.
    private static func environmentVariables() -> [String: String] {
        guard let all = PQconndefaults() else { return [:] }
        defer { PQconninfoFree(all) }
        return fields(all) { $0.envvar }
    }

    /// The settings with a value in a libpq option array, by keyword.
    static func values(_ options: UnsafeMutablePointer<PQconninfoOption>) -> [String: String] {
        fields(options) { $0.val }
    }

    /// One field of each option of a libpq option array that has it, by keyword.
    private static func fields(_ options: UnsafeMutablePointer<PQconninfoOption>,
                               _ field: (PQconninfoOption) -> UnsafeMutablePointer<CChar>?) -> [String: String] {
        var out: [String: String] = [:]
        var p = options
        while let k = p.pointee.keyword {
            if let v = field(p.pointee) { out[String(cString: k)] = String(cString: v) }
            p += 1
        }
        return out
    }
}
