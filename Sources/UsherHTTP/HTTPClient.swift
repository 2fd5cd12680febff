import Foundation
internal import CCurl

/// The project's one HTTP client (HTTP/1.1 over libcurl, TLS by OpenSSL): the Firestore adapter
/// and the webhook connector send through it.
///
/// One thread of its own drives a libcurl multi handle: `send` queues the request and suspends;
/// the thread runs up to `connections` transfers at once and resumes each caller with its
/// answer. The blocking and the sockets stay off Swift's cooperative pool, and the multi handle's
/// connection cache keeps connections open between requests (keep-alive), so a sequence of
/// requests to one server uses one connection. Requests beyond `connections` wait in order.
///
/// `close()` ends the thread; `deinit` closes a client that was not closed, so that a forgotten
/// client does not keep a thread and its connections forever.
public final class HTTPClient: Sendable {
    private let driver: CurlMultiDriver

    /// A client running at most `connections` requests at once (more wait their turn), giving
    /// up connecting after `connectTimeout` and on a whole request after `timeout` unless the
    /// request says otherwise. Starts the client's thread.
    public init(connections: Int = 4, connectTimeout: Duration = .seconds(5), timeout: Duration = .seconds(30)) {
        precondition(connections >= 1, "HTTPClient needs at least one connection")
        precondition(curlInitialized, "curl_global_init failed")
        driver = CurlMultiDriver(connections: connections, connectTimeout: connectTimeout, timeout: timeout)
    }

    /// Sends `request` and returns the server's answer, whatever its status. Throws only when
    /// there is no answer: no connection, a timeout, a broken exchange, or a closed client.
    ///
    /// Cancelling the calling task does not abort the transfer: the call returns when the
    /// transfer ends, at the latest after its timeout.
    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>) in
            driver.submit(request, c)
        }
        return try result.get()
    }

    /// Stops the client: transfers under way and queued fail with `.failed`, the connections
    /// close, the thread ends (this waits for it). Idempotent; a later `send` fails with `.failed`.
    public func close() { driver.close() }

    deinit { driver.close() }
}

/// `curl_global_init` runs once per process, before the first client starts (a global's
/// initializer runs once, thread-safely); libcurl requires it before any other call made
/// from several threads.
private let curlInitialized: Bool = usher_curl_global_init() == CURLE_OK
