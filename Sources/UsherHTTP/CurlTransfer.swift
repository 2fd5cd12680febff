internal import CCurl

/// One libcurl easy handle, reused transfer after transfer, with what the running transfer
/// gathers: status line, headers, body. Used only on its driver's thread.
final class CurlTransfer {
    /// The client's defaults, applied to every transfer.
    struct Defaults {
        var connectTimeoutMs: Int
        var timeoutMs: Int
    }

    let easy: UnsafeMutableRawPointer
    /// Where libcurl writes its detailed error text (`CURLOPT_ERRORBUFFER`).
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The header list for libcurl, built from `listHeaders`, kept while the requests that
    /// follow send the same headers (a client talking to one API sends the same ones each time).
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var listHeaders: [(name: String, value: String)] = []

    private var job: CurlMultiDriver.Job?
    private var headers: [(name: String, value: String)] = []
    private var body: [UInt8] = []

    init() {
        guard let easy = curl_easy_init() else { fatalError("curl_easy_init failed (out of memory)") }
        self.easy = easy
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    /// Whether a transfer is under way (prepared, not finished).
    var isRunning: Bool { job != nil }
    /// The request under way.
    var runningRequest: HTTPRequest? { job?.request }

    /// Sets the handle up for `job`. Options are reset first, so that nothing of the last
    /// transfer (a method, a body) carries over; the connection cache is the multi handle's and
    /// survives the reset.
    func prepare(_ job: CurlMultiDriver.Job, _ defaults: Defaults) {
        self.job = job
        headers = []
        body = []
        errorBuffer[0] = 0
        let request = job.request
        curl_easy_reset(easy)
        let this = Unmanaged.passUnretained(self).toOpaque()
        _ = usher_curl_setopt_pointer(easy, CURLOPT_PRIVATE, this)
        _ = usher_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        // No SIGALRM for DNS timeouts, no SIGPIPE handling: the process's signals are its own.
        _ = usher_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = usher_curl_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        _ = usher_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, defaults.connectTimeoutMs)
        _ = usher_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, request.timeout.map(milliseconds) ?? defaults.timeoutMs)
        _ = request.url.withCString { usher_curl_setopt_pointer(easy, CURLOPT_URL, $0) }   // copied by libcurl
        _ = usher_curl_setopt_write(easy, CURLOPT_WRITEFUNCTION, onBody)
        _ = usher_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, this)
        _ = usher_curl_setopt_write(easy, CURLOPT_HEADERFUNCTION, onHeader)
        _ = usher_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, this)

        let method = request.method
        if method == "HEAD" {
            _ = usher_curl_setopt_long(easy, CURLOPT_NOBODY, 1)
        } else if !request.body.isEmpty || method == "POST" || method == "PUT" || method == "PATCH" {
            // Copied by libcurl, so the pointer does not outlive the closure.
            _ = usher_curl_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
            _ = request.body.withUnsafeBytes { bytes in
                usher_curl_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, bytes.baseAddress ?? emptyBody)
            }
        }
        // POSTFIELDS makes a POST: any other method, and a GET with a body, is named explicitly.
        if method != "POST", method != "HEAD", method != "GET" || !request.body.isEmpty {
            _ = method.withCString { usher_curl_setopt_pointer(easy, CURLOPT_CUSTOMREQUEST, $0) }
        }
        if headerList == nil || !sameHeaders(listHeaders, request.headers) {
            buildHeaderList(request.headers)
        }
        _ = usher_curl_setopt_pointer(easy, CURLOPT_HTTPHEADER, headerList)
    }

    private func buildHeaderList(_ fields: [(name: String, value: String)]) {
        curl_slist_free_all(headerList)
        // `Expect:` (empty) stops libcurl from asking for `100 Continue` before a large body:
        // a round trip more, and a second's wait on servers that do not answer it.
        var list = curl_slist_append(nil, "Expect:")
        for field in fields {
            // "Name:" would remove a header: libcurl spells an empty value "Name;".
            let line = field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"
            list = curl_slist_append(list, line)
        }
        headerList = list
        listHeaders = fields
    }

    /// Ends the transfer with libcurl's result code.
    func finish(_ code: CURLcode) {
        guard let job else { return }
        if code == CURLE_OK {
            var status = 0
            _ = usher_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            finish(.success(HTTPResponse(status: status, headers: headers, body: body)))
            return
        }
        let kind: HTTPError.Kind = switch code {
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .cannotConnect
        case CURLE_OPERATION_TIMEDOUT: .timedOut
        default: .failed
        }
        let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        let where_ = "\(job.request.method) \(hostAndPort(of: job.request.url))"
        finish(.failure(HTTPError(kind: kind, message: "\(where_): \(detail)")))
    }

    /// Ends the transfer with `result`, resuming its caller; drops what it gathered.
    func finish(_ result: Result<HTTPResponse, HTTPError>) {
        guard let job else { return }
        self.job = nil
        headers = []
        body = []
        job.continuation.resume(returning: result)
    }

    /// Frees the handle (the driver's thread, at the end; never while in the multi handle).
    func cleanUp() {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        headerList = nil
        errorBuffer.deallocate()
    }

    /// A header line from libcurl, CRLF included: a status line starts a new set (an interim
    /// `100 Continue` is followed by the real answer), a `Name: value` line joins it.
    fileprivate func header(_ line: UnsafeRawBufferPointer) {
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        guard end > 0 else { return }
        if end >= 5, line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == 0x2F {  // "HTTP/"
            headers.removeAll(keepingCapacity: true)
            return
        }
        guard let colon = line[..<end].firstIndex(of: 0x3A) else { return }
        var start = colon + 1
        while start < end, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
        var valueEnd = end
        while valueEnd > start, line[valueEnd - 1] == 0x20 || line[valueEnd - 1] == 0x09 { valueEnd -= 1 }
        headers.append((String(decoding: line[..<colon], as: UTF8.self),
                        String(decoding: line[start..<valueEnd], as: UTF8.self)))
    }

    fileprivate func append(_ bytes: UnsafeRawBufferPointer) {
        body.append(contentsOf: bytes)
    }
}

private func sameHeaders(_ a: [(name: String, value: String)], _ b: [(name: String, value: String)]) -> Bool {
    guard a.count == b.count else { return false }
    for i in a.indices where a[i].name != b[i].name || a[i].value != b[i].value { return false }
    return true
}

/// A body of no bytes for libcurl, which wants a pointer even then: a static string's, which
/// never dangles.
private var emptyBody: UnsafeRawPointer { UnsafeRawPointer(("" as StaticString).utf8Start) }

private let onBody: curl_write_callback = { data, size, count, context in
    deliver(data, size * count, context) { $0.append($1) }
}

private let onHeader: curl_write_callback = { data, size, count, context in
    deliver(data, size * count, context) { $0.header($1) }
}

/// Hands `n` bytes from libcurl to the transfer `context` points at; returns how many were
/// taken (fewer would make libcurl abort the transfer).
private func deliver(_ data: UnsafeMutablePointer<CChar>?, _ n: Int, _ context: UnsafeMutableRawPointer?,
                     _ take: (CurlTransfer, UnsafeRawBufferPointer) -> Void) -> Int {
    guard let context else { return 0 }
    take(Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue(), UnsafeRawBufferPointer(start: data, count: n))
    return n
}
