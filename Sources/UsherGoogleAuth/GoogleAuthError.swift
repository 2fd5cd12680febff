public import UsherHTTP

/// Why a service-account key could not be loaded or used, or an access token not obtained.
public struct GoogleAuthError: Error, Sendable, CustomStringConvertible {
    /// A stable code: `no-credentials`, `unreadable-key-file`, `bad-key-file`, `missing-field`,
    /// `bad-field`, `bad-private-key`, `not-rsa`, `sign-failed`, `token-endpoint-unreachable`,
    /// `token-exchange-failed`, `bad-token-response`.
    public var code: String
    /// For people: names the key file and the field, or the token endpoint and its answer.
    public var message: String
    /// The token endpoint's HTTP status, when it answered with an error.
    public var status: Int?
    /// The transport failure, when the token endpoint could not be reached: its `kind` says
    /// whether waiting may mend it.
    public var httpError: HTTPError?

    public init(_ code: String, _ message: String, status: Int? = nil, httpError: HTTPError? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.httpError = httpError
    }

    public var description: String { message }
}
