/// One HTTP request for `HTTPClient.send`.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, `PATCH`, `DELETE`, `PUT` or `HEAD`; any other token is sent as it is.
    public var method: String
    /// The whole URL, `http://` or `https://`, with its query.
    public var url: String
    /// Header fields in the order sent. libcurl adds `Host`, `Accept: */*` and `Content-Length`
    /// unless given here, and for a body without a `Content-Type` here,
    /// `Content-Type: application/x-www-form-urlencoded`.
    public var headers: [(name: String, value: String)]
    /// The body sent (for any method, when not empty; a POST always sends one, maybe empty).
    public var body: [UInt8]
    /// The longest the whole exchange may take, connecting included, counted from when the
    /// transfer starts (a request waiting for a free connection waits outside it); nil: the
    /// client's default.
    public var timeout: Duration?

    /// A request; by default a GET without headers or body.
    public init(method: String = "GET", url: String, headers: [(name: String, value: String)] = [],
                body: [UInt8] = [], timeout: Duration? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}
