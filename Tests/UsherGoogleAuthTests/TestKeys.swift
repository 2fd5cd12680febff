import COpenSSL
import Foundation
import Testing
import UsherJSON

/// A key pair made by libcrypto for the tests: its private half as PEM (PKCS#8, as Google
/// writes it), its public half to verify signatures with.
final class TestKeyPair: @unchecked Sendable {
    // @unchecked: the key is only read after init (OpenSSL allows concurrent verification
    // with a context per call).
    let key: OpaquePointer
    let privatePEM: String

    /// A fresh key pair of `type` (`usher_evp_pkey_rsa()`, `usher_evp_pkey_ed25519()`).
    init(type: Int32, rsaBits: Int32 = 2048) {
        let context = EVP_PKEY_CTX_new_id(type, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_keygen_init(context) == 1)
        if type == usher_evp_pkey_rsa() { precondition(EVP_PKEY_CTX_set_rsa_keygen_bits(context, rsaBits) == 1) }
        var made: OpaquePointer?
        precondition(EVP_PKEY_keygen(context, &made) == 1)
        key = made!
        let bio = BIO_new(BIO_s_mem())!
        defer { BIO_free(bio) }
        precondition(PEM_write_bio_PKCS8PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1)
        var data: UnsafeMutablePointer<CChar>?
        let count = usher_bio_mem_data(bio, &data)
        privatePEM = String(decoding: UnsafeRawBufferPointer(start: data, count: count), as: UTF8.self)
    }

    deinit { EVP_PKEY_free(key) }

    /// Whether `signature` is this key's RS256 signature of `message`.
    func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }

    /// One RSA pair for all the tests (making one takes a while in a debug build).
    static let rsa = TestKeyPair(type: usher_evp_pkey_rsa())
}

/// A key file's JSON as Google writes it, with `private_key` = `pem` and any field replaced
/// (`nil`: left out).
func keyFileJSON(pem: String, tokenURI: String = "https://oauth2.googleapis.com/token",
                 replacing: [String: String?] = [:]) -> [UInt8] {
    var fields: [(String, String?)] = [
        ("type", "service_account"), ("project_id", "usher-test"), ("private_key_id", "kid-0123456789abcdef"),
        ("private_key", pem), ("client_email", "usher@usher-test.iam.gserviceaccount.com"), ("client_id", "1234567890"),
        ("auth_uri", "https://accounts.google.com/o/oauth2/auth"), ("token_uri", tokenURI),
    ]
    for (name, value) in replacing {
        if let i = fields.firstIndex(where: { $0.0 == name }) { fields[i].1 = value } else { fields.append((name, value)) }
    }
    var writer = JSONWriter()
    writer.byte(UInt8(ascii: "{"))
    var first = true
    for (name, value) in fields {
        guard let value else { continue }
        if !first { writer.byte(UInt8(ascii: ",")) }
        first = false
        writer.string(name)
        writer.byte(UInt8(ascii: ":"))
        writer.string(value)
    }
    writer.byte(UInt8(ascii: "}"))
    return writer.bytes
}

/// A temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("usher-auth-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }
    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Base64url without padding, decoded; nil when it is not.
func base64URLDecode(_ text: Substring) -> [UInt8]? {
    guard !text.contains("="), !text.contains("+"), !text.contains("/") else { return nil }
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while standard.count % 4 != 0 { standard += "=" }
    return Data(base64Encoded: standard).map(Array.init)
}

/// The JSON object of a JWT part, as a tree.
func jwtPart(_ text: Substring, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
    let bytes = try #require(base64URLDecode(text), "not base64url without padding: \(text)", sourceLocation: sourceLocation)
    return try bytes.withUnsafeBufferPointer { try JSONReader.parse($0) }
}
