import Foundation
import UsherStore

/// One signal per database file in this process: a write through any `SQLiteStore` wakes the
/// waiters of every store on the same file. Writes by other processes are seen by polling
/// `PRAGMA data_version` instead.
extension ChangeSignal {
    private static let registry = Locked<[String: WeakSignal]>([:])

    private struct WeakSignal: @unchecked Sendable {
        // @unchecked: a weak reference to a Sendable class, only touched under the registry lock.
        weak var signal: ChangeSignal?
    }

    /// The signal shared by every store of this process on the file at `path`.
    static func shared(for path: String) -> ChangeSignal {
        let key = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        return registry.withLock { r in
            if let s = r[key]?.signal { return s }
            if r.count > 64 { r = r.filter { $0.value.signal != nil } }
            let s = ChangeSignal()
            r[key] = WeakSignal(signal: s)
            return s
        }
    }
}
