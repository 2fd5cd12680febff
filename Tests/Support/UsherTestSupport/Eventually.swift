public import Testing

/// Waits until `condition` holds, looking again every 20 ms; after `timeout` records an issue
/// naming `what` (and `detail`: a worker's log, say). For what real servers, processes and
/// threads do in their own time: the bound is generous — it is reached only when the test
/// fails — and a loaded machine only makes the wait longer, never the test fail.
public func eventually(_ what: String, timeout: Duration = .seconds(30), detail: @autoclosure () -> String = "",
                       sourceLocation: SourceLocation = #_sourceLocation, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    if try await condition() { return }
    Issue.record("timed out after \(timeout) waiting for: \(what)\n\(detail())", sourceLocation: sourceLocation)
}
