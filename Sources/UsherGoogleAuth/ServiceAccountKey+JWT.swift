public import Foundation
import UsherJSON

extension ServiceAccountKey {
    /// How long a signed assertion is valid: Google's maximum, one hour.
    public static let assertionLifetime = 3600

    /// The JWT that asks `tokenURI` for an access token with `scope` (space-separated scopes;
    /// Firestore's is `https://www.googleapis.com/auth/datastore`), issued at `issuedAt` and
    /// valid for an hour: header `{"alg":"RS256","typ":"JWT","kid":…}`, claims `iss`, `scope`,
    /// `aud`, `iat`, `exp`, each part base64url without padding, signed RS256 by OpenSSL.
    public func signedJWT(scope: String, issuedAt: Date) throws(GoogleAuthError) -> String {
        var header = JSONWriter(capacity: 96)
        header.raw("{\"alg\":\"RS256\",\"typ\":\"JWT\"")
        header.key("kid")
        header.string(privateKeyID)
        header.byte(UInt8(ascii: "}"))

        let iat = Int(issuedAt.timeIntervalSince1970.rounded(.down))
        var claims = JSONWriter(capacity: 256)
        claims.byte(UInt8(ascii: "{"))
        claims.key("iss", first: true)
        claims.string(clientEmail)
        claims.key("scope")
        claims.string(scope)
        claims.key("aud")
        claims.string(tokenURI)
        claims.key("iat")
        claims.int(iat)
        claims.key("exp")
        claims.int(iat + Self.assertionLifetime)
        claims.byte(UInt8(ascii: "}"))

        let signingInput = base64URL(header.bytes) + "." + base64URL(claims.bytes)
        let signature = try privateKey.sign(Array(signingInput.utf8))
        return signingInput + "." + base64URL(signature)
    }
}

/// Base64url without padding (RFC 7515 §2), as JWTs are written.
func base64URL(_ bytes: [UInt8]) -> String {
    var text = Data(bytes).base64EncodedString()
    while text.hasSuffix("=") { text.removeLast() }
    return String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
}
