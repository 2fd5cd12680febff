import Foundation
internal import CCurl

/// The thread behind an `HTTPClient`: it owns a libcurl multi handle and a pool of easy
/// handles, one per connection the client may use at once, and runs every transfer.
final class CurlMultiDriver: @unchecked Sendable {
    // @unchecked: `shared` is touched only under `lock`. `multi`, `transfers`, `idle` and
    // `pending` only on the thread, except `curl_multi_wakeup`, which libcurl documents as
    // callable from any thread; it is called under `lock` and only before `closing` is seen, and
    // the thread cleans the multi handle up only after it has seen `closing` under `lock`.

    typealias Continuation = CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>

    /// A request and the caller waiting for its answer.
    struct Job {
        var request: HTTPRequest
        var continuation: Continuation
    }

    private struct Shared {
        /// Submitted, not yet taken by the thread.
        var queue: [Job] = []
        /// The thread is in (or about to enter) `curl_multi_poll`: a submit must wake it.
        var sleeping = false
        var closing = false
        /// The thread has ended and freed the handles.
        var exited = false
    }

    private let lock = NSCondition()
    private var shared = Shared()

    private let multi: UnsafeMutableRawPointer
    private let connections: Int
    private let defaults: CurlTransfer.Defaults
    /// Every easy handle made so far (at most `connections`), for the cleanup.
    private var transfers: [CurlTransfer] = []
    /// Easy handles not running a transfer; the last used is reused first.
    private var idle: [CurlTransfer] = []
    /// Taken from `shared.queue`, waiting for a free easy handle, from `pendingHead` on.
    private var pending: [Job] = []
    private var pendingHead = 0

    init(connections: Int, connectTimeout: Duration, timeout: Duration) {
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed (out of memory)") }
        self.multi = multi
        self.connections = connections
        defaults = CurlTransfer.Defaults(connectTimeoutMs: milliseconds(connectTimeout), timeoutMs: milliseconds(timeout))
        // A connection per transfer at once (HTTP/1.1 has no multiplexing), and as many kept open
        // between transfers, so that the next request finds one.
        _ = usher_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, connections)
        _ = usher_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, connections)
        let thread = Thread { [self] in run() }
        thread.name = "usher-http"
        thread.start()
    }

    /// Queues `request`; `continuation` is resumed on the thread when it ends, or here at once
    /// when the client is closed.
    func submit(_ request: HTTPRequest, _ continuation: Continuation) {
        lock.lock()
        if shared.closing {
            lock.unlock()
            continuation.resume(returning: .failure(Self.closedError(request)))
            return
        }
        shared.queue.append(Job(request: request, continuation: continuation))
        if shared.sleeping {
            shared.sleeping = false
            curl_multi_wakeup(multi)
        }
        lock.unlock()
    }

    /// Ends the thread and waits for it; idempotent.
    func close() {
        lock.lock()
        if !shared.closing {
            shared.closing = true
            curl_multi_wakeup(multi)
        }
        while !shared.exited { lock.wait() }
        lock.unlock()
    }

    private static func closedError(_ request: HTTPRequest) -> HTTPError {
        HTTPError(kind: .failed, message: "\(request.method) \(hostAndPort(of: request.url)): the HTTP client is closed")
    }

    // MARK: The thread

    private func run() {
        var running: Int32 = 0
        while true {
            lock.lock()
            let closing = shared.closing
            if !shared.queue.isEmpty {
                pending.append(contentsOf: shared.queue)
                shared.queue.removeAll(keepingCapacity: true)
            }
            lock.unlock()
            if closing { break }

            startPending()
            curl_multi_perform(multi, &running)
            let freed = collectFinished()
            if freed, pendingHead < pending.count { continue }

            lock.lock()
            let more = !shared.queue.isEmpty || shared.closing
            shared.sleeping = !more
            lock.unlock()
            if more { continue }
            // libcurl shortens the wait to its own next timeout (a transfer's deadline);
            // `curl_multi_wakeup` ends it early.
            curl_multi_poll(multi, nil, 0, 60_000, nil)
            lock.lock()
            shared.sleeping = false
            lock.unlock()
        }
        shutDown()
    }

    /// Starts queued jobs while easy handles are free (made up to `connections`).
    private func startPending() {
        while pendingHead < pending.count {
            let transfer: CurlTransfer
            if let t = idle.popLast() {
                transfer = t
            } else if transfers.count < connections {
                transfer = CurlTransfer()
                transfers.append(transfer)
            } else {
                break
            }
            let job = pending[pendingHead]
            pendingHead += 1
            transfer.prepare(job, defaults)
            let added = curl_multi_add_handle(multi, transfer.easy)
            if added != CURLM_OK {
                let message = String(cString: curl_multi_strerror(added))
                transfer.finish(.failure(HTTPError(kind: .failed, message: "\(job.request.method) \(hostAndPort(of: job.request.url)): \(message)")))
                idle.append(transfer)
            }
        }
        // Drop the started jobs once they are most of the array, not one by one.
        if pendingHead == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingHead = 0
        } else if pendingHead > 64, pendingHead * 2 > pending.count {
            pending.removeFirst(pendingHead)
            pendingHead = 0
        }
    }

    /// Ends the transfers libcurl reports done, resuming their callers. Returns whether any ended.
    private func collectFinished() -> Bool {
        var freed = false
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            // Read before the handle is removed: that frees the message.
            let code = message.pointee.data.result
            var context: UnsafeMutableRawPointer?
            _ = usher_curl_getinfo_pointer(easy, CURLINFO_PRIVATE, &context)
            curl_multi_remove_handle(multi, easy)
            guard let context else { continue }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            transfer.finish(code)
            idle.append(transfer)
            freed = true
        }
        return freed
    }

    /// Fails what runs and what waits, frees every handle, and says the thread has ended.
    private func shutDown() {
        for transfer in transfers where transfer.isRunning {
            curl_multi_remove_handle(multi, transfer.easy)
            transfer.finish(.failure(Self.closedError(transfer.runningRequest!)))
        }
        lock.lock()
        pending.append(contentsOf: shared.queue)
        shared.queue.removeAll()
        lock.unlock()
        for job in pending[pendingHead...] {
            job.continuation.resume(returning: .failure(Self.closedError(job.request)))
        }
        pending.removeAll()
        for transfer in transfers { transfer.cleanUp() }
        transfers.removeAll()
        idle.removeAll()
        curl_multi_cleanup(multi)
        lock.lock()
        shared.exited = true
        lock.broadcast()
        lock.unlock()
    }
}

/// Whole milliseconds of `d` (at least 1: libcurl reads 0 as "no timeout").
func milliseconds(_ d: Duration) -> Int {
    let (seconds, attoseconds) = d.components
    return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
}

/// `host:port` of `url` (the port libcurl would use when none is written), for error messages:
/// never the path, query or user information, which may carry secrets.
func hostAndPort(of url: String) -> String {
    guard let handle = curl_url() else { return "(URL not parsed)" }
    defer { curl_url_cleanup(handle) }
    guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { return "(malformed URL)" }
    func part(_ which: CURLUPart, _ flags: UInt32) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, which, &value, flags) == CURLUE_OK, let value else { return nil }
        defer { curl_free(value) }
        return String(cString: value)
    }
    let host = part(CURLUPART_HOST, 0) ?? "?"
    let port = part(CURLUPART_PORT, UInt32(CURLU_DEFAULT_PORT)) ?? "?"
    return "\(host):\(port)"
}
