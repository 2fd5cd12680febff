public import Foundation
public import UsherHTTP
import UsherJSON

/// OAuth 2.0 access tokens for a service account, for the `Authorization: Bearer` header of
/// Google API requests: a signed JWT exchanged at the key's `token_uri` (RFC 7523), the token
/// cached and exchanged again when it expires within five minutes.
///
/// Callers that find no usable token while an exchange runs wait for that exchange: one
/// exchange however many callers. A failed exchange is thrown to every caller waiting for it,
/// and the next call tries again.
///
/// Not exercised against Google's real token endpoint here; tested against a local endpoint
/// with a key generated in the test.
public final class AccessTokenSource: @unchecked Sendable {
    // @unchecked: `state` is touched only while `lock` (a pthread mutex, which ThreadSanitizer
    // follows, unlike `Mutex`'s slow path) is held; everything else is immutable.

    /// A token expiring within this many seconds is exchanged again before it is used.
    public static let refreshMargin: TimeInterval = 300

    /// A caller waiting for another's exchange: resumed with its token, or nil to look again.
    private typealias Waiter = CheckedContinuation<String?, any Error>

    private struct State {
        var token: String?
        var expires = Date.distantPast
        /// Non-nil while an exchange runs: the callers waiting for it.
        var waiters: [Waiter]?
    }

    private let key: ServiceAccountKey
    private let scope: String
    private let client: HTTPClient
    private let now: @Sendable () -> Date
    private let lock = NSLock()
    private var state = State()

    /// Tokens for `key` with `scope` (Firestore: `https://www.googleapis.com/auth/datastore`),
    /// exchanged through `client`; `now` is the clock (tests pass their own).
    public init(key: ServiceAccountKey, scope: String, client: HTTPClient,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.key = key
        self.scope = scope
        self.client = client
        self.now = now
    }

    /// An access token valid for at least `refreshMargin` more seconds: the cached one, or a
    /// fresh one from the token endpoint. Throws `GoogleAuthError`.
    public func token() async throws -> String {
        enum Next { case cached(String), join, exchange(Date) }
        while true {
            let next: Next = withState { s in
                let time = now()
                if let token = s.token, s.expires.timeIntervalSince(time) > Self.refreshMargin { return .cached(token) }
                if s.waiters != nil { return .join }
                s.waiters = []
                return .exchange(time)
            }
            switch next {
            case let .cached(token):
                return token
            case .join:
                let token = try await withCheckedThrowingContinuation { (waiter: Waiter) in
                    let joined = withState { s -> Bool in
                        guard s.waiters != nil else { return false }
                        s.waiters!.append(waiter)
                        return true
                    }
                    // The exchange ended between the two locks: look again.
                    if !joined { waiter.resume(returning: nil) }
                }
                if let token { return token }
            case let .exchange(issuedAt):
                let result: Result<(String, Date), any Error>
                do { result = .success(try await exchange(issuedAt: issuedAt)) } catch { result = .failure(error) }
                let waiters = withState { s -> [Waiter] in
                    if case let .success((token, expires)) = result {
                        s.token = token
                        s.expires = expires
                    }
                    defer { s.waiters = nil }
                    return s.waiters ?? []
                }
                for waiter in waiters { waiter.resume(with: result.map { Optional($0.0) }) }
                return try result.get().0
            }
        }
    }

    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// Forgets the cached token, so that the next `token()` exchanges a fresh one: for a 401
    /// from the API (a token revoked, or the key's permissions changed).
    public func invalidate() {
        withState { s in
            s.token = nil
            s.expires = .distantPast
        }
    }

    /// Exchanges a JWT issued at `issuedAt` for a token; returns it with its expiry.
    private func exchange(issuedAt: Date) async throws(GoogleAuthError) -> (String, Date) {
        let assertion = try key.signedJWT(scope: scope, issuedAt: issuedAt)
        // The JWT is base64url and dots: nothing in it needs escaping in a form body.
        let body = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion
        let response: HTTPResponse
        do {
            response = try await client.send(HTTPRequest(
                method: "POST", url: key.tokenURI,
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                body: Array(body.utf8)))
        } catch {
            throw GoogleAuthError("token-endpoint-unreachable",
                                  "cannot reach the token endpoint \(key.tokenURI) for \(key.clientEmail): \(error.message)",
                                  httpError: error)
        }
        let answer = try? response.body.withUnsafeBufferPointer { (bytes) throws(JSONError) in try JSONReader.parse(bytes) }
        func text(_ name: String) -> String? {
            if case let .string(s)? = answer?[name]?.kind { return s }
            return nil
        }
        guard response.status == 200 else {
            var reason = [text("error"), text("error_description")].compactMap { $0 }.joined(separator: ": ")
            if reason.isEmpty { reason = String(decoding: response.body.prefix(200), as: UTF8.self) }
            throw GoogleAuthError("token-exchange-failed",
                                  "the token endpoint \(key.tokenURI) refused the key \(key.privateKeyID) of \(key.clientEmail): \(response.status) \(reason)",
                                  status: response.status)
        }
        guard let token = text("access_token"), !token.isEmpty,
              case let .number(seconds)? = answer?["expires_in"]?.kind, let lifetime = Double(seconds) else {
            throw GoogleAuthError("bad-token-response",
                                  "the token endpoint \(key.tokenURI) answered 200 without 'access_token' and 'expires_in'",
                                  status: response.status)
        }
        // Counted from when the JWT was made, before the round trip: never later than Google's.
        return (token, issuedAt.addingTimeInterval(lifetime))
    }
}
