import Foundation
import Synchronization
import Testing
import UsherGoogleAuth
import UsherHTTP
import UsherHTTPTestServer
import UsherJSON

/// A clock the test moves, which counts how often it is read.
private final class TestClock: Sendable {
    private let state = Mutex((now: Date(timeIntervalSince1970: 1_800_000_000), reads: 0))
    @Sendable func now() -> Date { state.withLock { $0.reads += 1; return $0.now } }
    func advance(_ seconds: TimeInterval) { state.withLock { $0.now += seconds } }
    var reads: Int { state.withLock { $0.reads } }
    var peek: Date { state.withLock { $0.now } }
}

/// A token endpoint on loopback that does what Google's does with a JWT bearer grant: checks
/// the form, the assertion's signature (with the test's public key) and its audience, and
/// answers a numbered token — or what the test makes it answer.
private final class TokenEndpoint: Sendable {
    enum Answer: Sendable {
        case token(lifetime: Int)
        /// A token, once the clock has been read `reads` times (callers are all waiting).
        case tokenAfterReads(Int)
        case raw(status: Int, body: String)
    }

    struct Exchange: Sendable {
        var contentType: String?
        var grantType: String?
        var issuedAt: String?
    }

    private let state = Mutex((answer: Answer.token(lifetime: 3599), exchanges: [Exchange]()))
    let server: LoopbackHTTPServer
    let tokenURI: String

    init(clock: TestClock) throws {
        let box = Box()
        server = try LoopbackHTTPServer { request in box.endpoint!.answer(request, clock) }
        tokenURI = server.baseURL + "/token"
        box.endpoint = self
    }

    /// Lets the handler reach the endpoint made after the server.
    private final class Box: @unchecked Sendable {
        // @unchecked: set once, before the first request can arrive.
        var endpoint: TokenEndpoint?
    }

    var exchanges: [Exchange] { state.withLock { $0.exchanges } }
    func answer(with answer: Answer) { state.withLock { $0.answer = answer } }
    func close() { server.close() }

    private func answer(_ request: LoopbackHTTPServer.Request, _ clock: TestClock) -> LoopbackHTTPServer.Response {
        var form: [String: String] = [:]
        for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            if kv.count == 2 { form[kv[0]] = kv[1] }
        }
        let parts = (form["assertion"] ?? "").split(separator: ".", omittingEmptySubsequences: false)
        let claims = parts.count == 3 ? try? jwtPart(parts[1]) : nil
        let exchange = Exchange(contentType: request.header("Content-Type"), grantType: form["grant_type"],
                                issuedAt: number(claims?["iat"]))
        let (answer, n) = state.withLock { s in
            s.exchanges.append(exchange)
            return (s.answer, s.exchanges.count)
        }
        guard request.method == "POST", request.target == "/token", parts.count == 3,
              let signature = base64URLDecode(parts[2]),
              TestKeyPair.rsa.verifies(signature, of: Array("\(parts[0]).\(parts[1])".utf8)) else {
            return .json("{\"error\":\"invalid_grant\",\"error_description\":\"Invalid JWT Signature.\"}", status: 400)
        }
        guard string(claims?["aud"]) == tokenURI else {
            return .json("{\"error\":\"invalid_grant\",\"error_description\":\"Invalid JWT: audience\"}", status: 400)
        }
        switch answer {
        case let .token(lifetime):
            return .json("{\"access_token\":\"token-\(n)\",\"expires_in\":\(lifetime),\"token_type\":\"Bearer\"}")
        case let .tokenAfterReads(reads):
            let deadline = Date().addingTimeInterval(10)
            while clock.reads < reads, Date() < deadline { usleep(200) }
            return .json("{\"access_token\":\"token-\(n)\",\"expires_in\":3599,\"token_type\":\"Bearer\"}")
        case let .raw(status, body):
            return LoopbackHTTPServer.Response(status: status, body: Array(body.utf8))
        }
    }
}

/// A test clock, a token endpoint, a client and a token source for a key whose `token_uri` is
/// the endpoint's.
private struct Fixture {
    let clock = TestClock()
    let endpoint: TokenEndpoint
    let client = HTTPClient()
    let tokens: AccessTokenSource

    init(answer: TokenEndpoint.Answer = .token(lifetime: 3599)) throws {
        endpoint = try TokenEndpoint(clock: clock)
        endpoint.answer(with: answer)
        let key = try ServiceAccountKey(json: keyFileJSON(pem: TestKeyPair.rsa.privatePEM, tokenURI: endpoint.tokenURI),
                                        source: "test-key.json")
        tokens = AccessTokenSource(key: key, scope: "https://www.googleapis.com/auth/datastore", client: client, now: clock.now)
    }

    func close() {
        client.close()
        endpoint.close()
    }
}

@Suite struct AccessTokenSourceTests {
    @Test func exchangesOnceThenUsesTheCachedToken() async throws {
        let f = try Fixture()
        defer { f.close() }
        #expect(try await f.tokens.token() == "token-1")
        f.clock.advance(60)
        #expect(try await f.tokens.token() == "token-1")
        let exchanges = f.endpoint.exchanges
        try #require(exchanges.count == 1)
        #expect(exchanges[0].contentType == "application/x-www-form-urlencoded")
        #expect(exchanges[0].grantType == "urn:ietf:params:oauth:grant-type:jwt-bearer")
        #expect(exchanges[0].issuedAt == "1800000000")
    }

    @Test func refreshesFiveMinutesBeforeExpiry() async throws {
        let f = try Fixture()
        defer { f.close() }
        #expect(try await f.tokens.token() == "token-1")
        // Expires at +3599 s: kept while more than 300 s are left.
        f.clock.advance(3599 - 301)
        #expect(try await f.tokens.token() == "token-1")
        f.clock.advance(2)
        #expect(try await f.tokens.token() == "token-2")
        #expect(f.endpoint.exchanges.map(\.issuedAt) == ["1800000000", "\(1_800_000_000 + 3599 - 299)"])
        // The fresh token's own expiry counts from its exchange.
        f.clock.advance(3599 - 301)
        #expect(try await f.tokens.token() == "token-2")
        #expect(f.endpoint.exchanges.count == 2)
    }

    /// Twenty callers with no token: one exchange. The endpoint answers only once the clock has
    /// been read twenty times — once by each caller as it enters `token()`, so all of them came
    /// while the exchange ran.
    @Test func concurrentCallersShareOneExchange() async throws {
        let f = try Fixture(answer: .tokenAfterReads(20))
        defer { f.close() }
        let got = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await f.tokens.token() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(got == Array(repeating: "token-1", count: 20))
        #expect(f.endpoint.exchanges.count == 1)
    }

    @Test func invalidateExchangesAgain() async throws {
        let f = try Fixture()
        defer { f.close() }
        #expect(try await f.tokens.token() == "token-1")
        f.tokens.invalidate()
        #expect(try await f.tokens.token() == "token-2")
        #expect(try await f.tokens.token() == "token-2")
    }

    @Test func refusedExchangeNamesStatusAndGooglesError() async throws {
        let f = try Fixture(answer: .raw(status: 400, body: "{\"error\":\"invalid_grant\",\"error_description\":\"Invalid JWT Signature.\"}"))
        defer { f.close() }
        let error = await #expect(throws: GoogleAuthError.self) { try await f.tokens.token() }
        #expect(error?.code == "token-exchange-failed")
        #expect(error?.status == 400)
        #expect(error?.message.contains("400 invalid_grant: Invalid JWT Signature.") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(f.endpoint.tokenURI) == true)
        // Not cached: the next call tries again.
        f.endpoint.answer(with: .token(lifetime: 3599))
        #expect(try await f.tokens.token() == "token-2")
    }

    @Test(arguments: [
        (503, "upstream down", "token-exchange-failed", "503 upstream down"),
        (200, "{\"token_type\":\"Bearer\"}", "bad-token-response", "without 'access_token'"),
        (200, "{\"access_token\":\"t\",\"expires_in\":\"soon\"}", "bad-token-response", "'expires_in'"),
    ])
    func oddAnswers(status: Int, body: String, code: String, words: String) async throws {
        let f = try Fixture(answer: .raw(status: status, body: body))
        defer { f.close() }
        let error = await #expect(throws: GoogleAuthError.self) { try await f.tokens.token() }
        #expect(error?.code == code)
        #expect(error?.message.contains(words) == true, "\(error?.message ?? "")")
    }

    @Test func unreachableEndpoint() async throws {
        let f = try Fixture()
        defer { f.close() }
        // Closed: its port refuses connections.
        f.endpoint.close()
        let error = await #expect(throws: GoogleAuthError.self) { try await f.tokens.token() }
        #expect(error?.code == "token-endpoint-unreachable")
        #expect(error?.httpError?.kind == .cannotConnect)
    }
}
