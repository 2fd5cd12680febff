/// Why `HTTPClient.send` got no response. A response with any status is not an error.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as far as a caller deciding to retry cares.
    public enum Kind: Sendable {
        /// No connection was made: refused, host not found, no route. Nothing reached the
        /// server, so retrying is safe, and waiting may mend it.
        case cannotConnect
        /// The request's timeout (or the client's connect timeout) passed. The server may or
        /// may not have acted on the request.
        case timedOut
        /// Anything else: TLS, a broken connection, a malformed URL or answer, a closed client.
        case failed
    }

    /// What went wrong.
    public var kind: Kind
    /// libcurl's text for the failure, after the method and the URL's `host:port` — never its
    /// path, query or credentials, which may hold secrets.
    public var message: String

    /// An error of `kind` (public for test doubles of the client's callers).
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
