public import UsherStore

/// A store that serves HTTP itself (the webhook's listener): `usher run` hands it the worker it
/// runs, whose `/metrics`, `/healthz` and `/readyz` it then answers beside its own routes, and in
/// whose metrics and log its own events (deliveries, dead letters) are counted and written.
public protocol ServingStore: ChatStore {
    /// Called once, after the worker is made and before it runs.
    func serve(_ worker: Worker)
}
