extension Worker {
    /// `/metrics` (Prometheus text), `/healthz` (the process is up), `/readyz` (caught up with the
    /// store, and every bot's rules load).
    public func httpResponse(path: String) -> HTTPServer.Response {
        switch path {
        case "/metrics":
            return .init(contentType: "text/plain; version=0.0.4; charset=utf-8", body: metrics.render())
        case "/healthz":
            return .init(body: isStopping ? "stopping\n" : "ok\n")
        case "/readyz":
            if isStopping { return .init(status: 503, body: "stopping\n") }
            return isReady ? .init(body: "ready\n") : .init(status: 503, body: "catching up\n")
        default:
            return .init(status: 404, body: "not found: try /metrics, /healthz or /readyz\n")
        }
    }
}
