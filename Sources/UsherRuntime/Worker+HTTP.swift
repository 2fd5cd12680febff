extension Worker {
    /// `/metrics` (Prometheus text), `/healthz` (the worker can work: 503 while its store calls
    /// fail and are retried, or after a failure that ends it) and `/readyz` (that, and caught up
    /// with the store). A 503's body says why: the error's code and message, and since when.
    public func httpResponse(path: String) -> HTTPServer.Response {
        switch path {
        case "/metrics":
            return .init(contentType: "text/plain; version=0.0.4; charset=utf-8", body: metrics.render())
        case "/healthz":
            if let failing = storeFailure { return .init(status: 503, body: failing) }
            return .init(body: isStopping ? "stopping\n" : "ok\n")
        case "/readyz":
            if let failing = storeFailure { return .init(status: 503, body: failing) }
            if isStopping { return .init(status: 503, body: "stopping\n") }
            return isReady ? .init(body: "ready\n") : .init(status: 503, body: "catching up\n")
        default:
            return .init(status: 404, body: "not found: try /metrics, /healthz or /readyz\n")
        }
    }

    /// Why the worker cannot work now, for a 503's body; nil while the store works.
    private var storeFailure: String? {
        switch storeStatus {
        case .working:
            return nil
        case let .failing(f, since):
            let seconds = Self.seconds(uptime() - since)
            return "store failing for \(seconds)s, retrying: \(f.code): \(f.message) (bot \(f.bot), \(f.operation))\n"
        case let .failed(f):
            return "failed: \(f.code): \(f.message); the worker is stopping and exits 1\n"
        }
    }
}
