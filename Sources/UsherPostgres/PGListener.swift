import Foundation
import Synchronization
import UsherStore

/// A thread with its own connection that LISTENs on the store's channel and wakes waiters on
/// every NOTIFY. When the connection drops it reconnects with backoff and, once back, wakes the
/// waiters anyway: the worker then reads from its cursor, so what was written meanwhile is found.
final class PGListener: Sendable {
    let signal = ChangeSignal()
    private let running = Atomic<Bool>(true)
    private let listening = Atomic<Bool>(false)
    private let session: PGSession

    init(_ conninfo: String, channel: String) {
        session = PGSession(conninfo, label: "usher.postgres.listen", thread: false) { db throws(StoreError) in
            try db.script("LISTEN \(PGText.identifier(channel))")
        }
        let thread = Thread { [self] in loop() }
        thread.name = "usher-pg-listen"
        thread.start()
    }

    /// Whether the LISTEN connection is up (else callers poll).
    var isListening: Bool { listening.load(ordering: .relaxed) }

    var generation: UInt64 { signal.generation }

    func stop() { running.store(false, ordering: .relaxed) }

    private func loop() {
        var backoff = 0.05
        while running.load(ordering: .relaxed) {
            do {
                let channels = try session.runHere { db in
                    if !listening.load(ordering: .relaxed) {
                        listening.store(true, ordering: .relaxed)
                        signal.notify()   // (re)connected: look again from the cursor
                    }
                    return try db.notifications(wait: 200)
                }
                backoff = 0.05
                if !channels.isEmpty { signal.notify() }
            } catch {
                listening.store(false, ordering: .relaxed)
                Thread.sleep(forTimeInterval: backoff)
                backoff = min(backoff * 2, 2)
            }
        }
        session.closeHere()
    }
}
