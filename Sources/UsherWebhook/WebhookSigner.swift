public import Foundation
internal import COpenSSL

/// Signs and checks webhook requests, both ways: `X-Usher-Timestamp: SECONDS` (Unix time) and
/// `X-Usher-Signature: sha256=HEX`, the HMAC-SHA256 (OpenSSL's libcrypto) of `SECONDS.BODY` —
/// the timestamp, a dot, the raw body — with the shared secret; for a request without a body (a
/// GET), of `SECONDS.METHOD PATH` (`1700000000.GET /v1/conversations/c1`), so that a signed read
/// of one conversation cannot be replayed to read another. The timestamp is signed too, so
/// that a request captured and sent again later cannot be given a fresh one: requests more than
/// `window` away from now are refused. Signatures are compared in constant time.
///
/// Chatwoot signs its webhooks the same way under other names (`X-Chatwoot-Timestamp`,
/// `X-Chatwoot-Signature`; its lib/webhooks/trigger.rb): `chatwoot(secret:)`.
public struct WebhookSigner: Sendable {
    public static let timestampHeader = "X-Usher-Timestamp"
    public static let signatureHeader = "X-Usher-Signature"

    private let secret: [UInt8]
    /// How far a request's timestamp may be from now, either way.
    public let window: TimeInterval
    /// The headers carrying the timestamp and the signature.
    public let timestampHeader: String
    public let signatureHeader: String
    /// Where the secret comes from, for the refusal's hint.
    public let secretName: String

    /// Why a request's signature was refused: what the 401 says.
    public struct Refusal: Error, Sendable, Equatable {
        /// The header at fault.
        public var field: String
        public var message: String
    }

    public init(secret: [UInt8], window: TimeInterval = 300, timestampHeader: String = Self.timestampHeader,
                signatureHeader: String = Self.signatureHeader, secretName: String = "USHER_WEBHOOK_SECRET") {
        self.secret = secret
        self.window = window
        self.timestampHeader = timestampHeader
        self.signatureHeader = signatureHeader
        self.secretName = secretName
    }

    /// Chatwoot's signature of its webhooks (an agent bot's, with the bot's secret).
    public static func chatwoot(secret: [UInt8], window: TimeInterval = 300) -> WebhookSigner {
        WebhookSigner(secret: secret, window: window, timestampHeader: "X-Chatwoot-Timestamp", signatureHeader: "X-Chatwoot-Signature",
                      secretName: "CHATWOOT_WEBHOOK_SECRET, the agent bot's secret")
    }

    /// What is signed after `SECONDS.`: the body, or, for a request without one, its method and
    /// path (`GET /v1/conversations/c1`; the path without a query, percent-decoded as the
    /// listener reads it).
    public static func signedContent(method: String, path: String, body: [UInt8]) -> [UInt8] {
        body.isEmpty ? Array("\(method) \(path)".utf8) : body
    }

    /// The headers that sign a request of `body` (or, without a body, of `method` and `path`) at `time`.
    public func headers(method: String = "POST", path: String = "", body: [UInt8], at time: Date) -> [(name: String, value: String)] {
        let seconds = Int(time.timeIntervalSince1970.rounded(.down))
        let content = Self.signedContent(method: method, path: path, body: body)
        return [(timestampHeader, String(seconds)), (signatureHeader, "sha256=" + Self.hex(mac(seconds, content)))]
    }

    /// Checks a request's signature headers (by lowercased name) over `body` (or, without a
    /// body, over `method` and `path`) at `now`.
    public func check(method: String = "POST", path: String = "", body: [UInt8], headers: [String: String], now: Date) throws(Refusal) {
        let timestampName = timestampHeader.lowercased(), signatureName = signatureHeader.lowercased()
        guard let stamp = headers[timestampName] else {
            throw Refusal(field: timestampHeader, message: "missing \(timestampHeader): the request's Unix time in seconds, signed with the body")
        }
        guard let seconds = Int(stamp.trimmingCharacters(in: .whitespaces)) else {
            throw Refusal(field: timestampHeader, message: "\(timestampHeader) is '\(stamp.prefix(40))'; expected Unix time in seconds")
        }
        let skew = now.timeIntervalSince1970 - Double(seconds)
        guard abs(skew) <= window else {
            throw Refusal(field: timestampHeader,
                          message: "\(timestampHeader) is \(Int(abs(skew))) s \(skew > 0 ? "old" : "in the future"); "
                          + "at most \(Int(window)) s either way is taken (a replayed request, or a clock that is off)")
        }
        guard let signature = headers[signatureName] else {
            throw Refusal(field: signatureHeader, message: "missing \(signatureHeader): sha256=HEX, the HMAC-SHA256 of TIMESTAMP.BODY "
                          + "(TIMESTAMP.METHOD PATH for a request without a body)")
        }
        let expected = mac(seconds, Self.signedContent(method: method, path: path, body: body))
        guard signature.hasPrefix("sha256="), let given = Self.bytes(hex: signature.dropFirst(7)), given.count == expected.count,
              given.withUnsafeBytes({ g in expected.withUnsafeBytes { e in CRYPTO_memcmp(g.baseAddress, e.baseAddress, e.count) } }) == 0
        else {
            throw Refusal(field: signatureHeader, message: "\(signatureHeader) does not match the request: sign TIMESTAMP.BODY "
                          + "(TIMESTAMP.\(method) \(path) without a body) with HMAC-SHA256 and the shared secret (\(secretName)), "
                          + "hex-encoded after sha256=")
        }
    }

    private func mac(_ seconds: Int, _ body: [UInt8]) -> [UInt8] {
        let message = Array("\(seconds).".utf8) + body
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        secret.withUnsafeBytes { key in
            message.withUnsafeBytes { data in
                _ = HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), data.baseAddress?.assumingMemoryBound(to: UInt8.self),
                         data.count, &out, &length)
            }
        }
        return Array(out.prefix(Int(length)))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func bytes(hex: Substring) -> [UInt8]? {
        let chars = Array(hex.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        for i in stride(from: 0, to: chars.count, by: 2) {
            guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
        }
        return out
    }
}
