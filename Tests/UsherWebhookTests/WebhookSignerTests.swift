import Foundation
import Testing
import UsherWebhook

@Suite("Webhook signatures")
struct WebhookSignerTests {
    let signer = WebhookSigner(secret: Array("s3cret".utf8))
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let body = Array(#"{"conversation":"c1","id":"m1","text":"hi"}"#.utf8)

    func headers(_ pairs: [(name: String, value: String)]) -> [String: String] {
        Dictionary(pairs.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    func refusal(_ headers: [String: String], body: [UInt8]? = nil, at time: Date? = nil) -> WebhookSigner.Refusal? {
        do {
            try signer.check(body: body ?? self.body, headers: headers, now: time ?? now)
            return nil
        } catch {
            return error
        }
    }

    @Test func aSignedRequestPassesWithinTheWindowEitherWay() {
        let signed = headers(signer.headers(body: body, at: now))
        #expect(signed["x-usher-timestamp"] == "1800000000")
        #expect(signed["x-usher-signature"]?.hasPrefix("sha256=") == true)
        #expect(signed["x-usher-signature"]?.count == 7 + 64)
        #expect(refusal(signed) == nil)
        #expect(refusal(signed, at: now.addingTimeInterval(300)) == nil)
        #expect(refusal(signed, at: now.addingTimeInterval(-300)) == nil)
    }

    /// The HMAC is the standard one: what `printf '0.The quick brown fox jumps over the lazy dog' |
    /// openssl dgst -sha256 -hmac key` prints.
    @Test func theSignatureIsHMACSHA256OfTimestampDotBody() {
        let signed = headers(WebhookSigner(secret: Array("key".utf8)).headers(body: Array("The quick brown fox jumps over the lazy dog".utf8),
                                                                             at: Date(timeIntervalSince1970: 0)))
        #expect(signed["x-usher-signature"] == "sha256=8511f28f7a1949f0c42772b447d68b2daf760f5f0439a20a17e3b4e7cd395763")
    }

    @Test func anOldOrFutureTimestampIsRefusedNamingTheHeader() {
        let signed = headers(signer.headers(body: body, at: now))
        let old = refusal(signed, at: now.addingTimeInterval(301))
        #expect(old?.field == "X-Usher-Timestamp")
        #expect(old?.message.contains("301 s old") == true)
        #expect(refusal(signed, at: now.addingTimeInterval(-301))?.message.contains("in the future") == true)
    }

    @Test func aChangedBodyTimestampOrSecretIsRefused() {
        let signed = headers(signer.headers(body: body, at: now))
        #expect(refusal(signed, body: body + [0x20])?.field == "X-Usher-Signature")
        var restamped = signed
        restamped["x-usher-timestamp"] = "1800000001"
        #expect(refusal(restamped)?.field == "X-Usher-Signature")
        let other = headers(WebhookSigner(secret: Array("other".utf8)).headers(body: body, at: now))
        #expect(refusal(other)?.field == "X-Usher-Signature")
    }

    /// A request without a body signs its method and path: `printf '0.GET /v1/conversations/c1' |
    /// openssl dgst -sha256 -hmac key`; the signature of one read is no signature of another.
    @Test func aRequestWithoutABodySignsItsMethodAndPath() throws {
        let key = WebhookSigner(secret: Array("key".utf8))
        let zero = Date(timeIntervalSince1970: 0)
        let signed = headers(key.headers(method: "GET", path: "/v1/conversations/c1", body: [], at: zero))
        #expect(signed["x-usher-signature"] == "sha256=" + (try hmacHex(key: "key", "0.GET /v1/conversations/c1")))
        #expect((try? key.check(method: "GET", path: "/v1/conversations/c1", body: [], headers: signed, now: zero)) != nil)
        #expect((try? key.check(method: "GET", path: "/v1/conversations/c2", body: [], headers: signed, now: zero)) == nil)
        #expect((try? key.check(method: "HEAD", path: "/v1/conversations/c1", body: [], headers: signed, now: zero)) == nil)
        // An empty signed text (the old scheme for a GET) is refused.
        let empty = headers(key.headers(body: Array("x".utf8), at: zero)).merging(
            ["x-usher-signature": "sha256=" + (try hmacHex(key: "key", "0."))]) { _, b in b }
        #expect((try? key.check(method: "GET", path: "/v1/conversations/c1", body: [], headers: empty, now: zero)) == nil)
    }

    /// HMAC-SHA256 as `openssl dgst` computes it, for the expected values above.
    func hmacHex(key: String, _ text: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = ["dgst", "-sha256", "-hmac", key]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        try p.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        let out = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return String(try #require(out.split(separator: " ").last).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(arguments: [
        ([:], "X-Usher-Timestamp"),
        (["x-usher-timestamp": "yesterday"], "X-Usher-Timestamp"),
        (["x-usher-timestamp": "1800000000"], "X-Usher-Signature"),
        (["x-usher-timestamp": "1800000000", "x-usher-signature": "md5=00"], "X-Usher-Signature"),
        (["x-usher-timestamp": "1800000000", "x-usher-signature": "sha256=zz"], "X-Usher-Signature"),
        (["x-usher-timestamp": "1800000000", "x-usher-signature": "sha256=abcd"], "X-Usher-Signature"),
    ])
    func missingOrMalformedHeadersAreRefused(_ headers: [String: String], _ field: String) {
        #expect(refusal(headers)?.field == field)
    }
}
