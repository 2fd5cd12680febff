import Dispatch
import Foundation
import UsherSQLite
import UsherStdio
import UsherStore

/// Store URLs (DESIGN.md §6): `sqlite:PATH` (the default, `sqlite:usher.db`), `stdio` or
/// `stdio:STATE.db`. Secrets come from the URL or the environment and are never printed.
enum StoreURL {
    static let `default` = "sqlite:usher.db"

    /// Opens the store a URL names; a usage error for a URL no adapter understands, a
    /// `StoreFailure` when the store cannot be opened.
    static func open(_ url: String) throws(UsageError) -> any ChatStore {
        guard url.hasPrefix("sqlite:") || url == "stdio" || url.hasPrefix("stdio:") else {
            let scheme = url.split(separator: ":").first.map(String.init) ?? url
            throw UsageError("unknown store '\(redacted(url))'; use sqlite:PATH or stdio"
                + (["postgres", "postgresql", "redis"].contains(scheme) ? " (\(scheme) is not supported yet)" : ""))
        }
        let box = StoreBox()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                box.store = url.hasPrefix("sqlite:") ? try await SQLiteStore.open(url: url) : try await StdioStore.open(url: url)
            } catch {
                box.error = "\(error)"
            }
            done.signal()
        }
        done.wait()
        guard let store = box.store else {
            throw UsageError("cannot open \(redacted(url)): \(box.error ?? "unknown error")")
        }
        return store
    }

    /// The URL without a password, for messages and logs.
    static func redacted(_ url: String) -> String {
        guard let at = url.firstIndex(of: "@"), let scheme = url.range(of: "://"), scheme.upperBound < at else { return url }
        let userinfo = url[scheme.upperBound..<at]
        guard let colon = userinfo.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }
}

final class StoreBox: @unchecked Sendable {
    // @unchecked: written by one task before it signals the semaphore the reader waits on.
    var store: (any ChatStore)?
    var error: String?
}
