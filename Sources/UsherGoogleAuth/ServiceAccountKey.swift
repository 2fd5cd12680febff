public import Foundation
import UsherJSON

/// A Google service-account key: the JSON file Google issues for a service account, as the
/// Firestore adapter uses it in production (`GOOGLE_APPLICATION_CREDENTIALS`).
///
/// Every field the token exchange needs is checked when the key is loaded, and the private key
/// is parsed then: a bad file fails at start-up, naming the file and the field.
public struct ServiceAccountKey: Sendable {
    /// `project_id`.
    public let projectID: String
    /// `private_key_id`: the JWT's `kid`.
    public let privateKeyID: String
    /// `client_email`: the JWT's issuer.
    public let clientEmail: String
    /// `token_uri`: where the JWT is exchanged for an access token, and the JWT's audience.
    public let tokenURI: String
    /// Where the key came from (a path), for messages.
    public let source: String
    let privateKey: RSAPrivateKey

    /// The environment variable Google's libraries read the key file's path from.
    public static let environmentVariable = "GOOGLE_APPLICATION_CREDENTIALS"

    /// Parses a key file's contents; `source` names it in errors.
    public init(json: [UInt8], source: String) throws(GoogleAuthError) {
        let root: JSONValue
        do {
            root = try json.withUnsafeBufferPointer { (bytes) throws(JSONError) in try JSONReader.parse(bytes) }
        } catch {
            throw GoogleAuthError("bad-key-file", "\(source): not a JSON key file: \(error.message) (byte \(error.offset))")
        }
        guard case .object = root.kind else {
            throw GoogleAuthError("bad-key-file", "\(source): not a JSON key file: \(root.typeName), not an object")
        }
        func field(_ name: String) throws(GoogleAuthError) -> String {
            guard let value = root[name] else {
                throw GoogleAuthError("missing-field", "\(source): no '\(name)' field (is this a service account key file?)")
            }
            guard case let .string(text) = value.kind, !text.isEmpty else {
                throw GoogleAuthError("bad-field", "\(source): '\(name)' is \(value.typeName == "a string" ? "empty" : value.typeName), not a non-empty string")
            }
            return text
        }
        let type = try field("type")
        guard type == "service_account" else {
            throw GoogleAuthError("bad-field", "\(source): 'type' is '\(type)', not 'service_account' (only service account keys are supported)")
        }
        projectID = try field("project_id")
        privateKeyID = try field("private_key_id")
        clientEmail = try field("client_email")
        tokenURI = try field("token_uri")
        guard tokenURI.hasPrefix("https://") || tokenURI.hasPrefix("http://") else {
            throw GoogleAuthError("bad-field", "\(source): 'token_uri' is '\(tokenURI)', not an http(s) URL")
        }
        privateKey = try RSAPrivateKey(pem: try field("private_key"), source: source)
        self.source = source
    }

    /// Reads and parses the key file at `path`.
    public static func load(path: String) throws(GoogleAuthError) -> ServiceAccountKey {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GoogleAuthError("unreadable-key-file", "\(path): cannot read the service account key file (missing, or not readable)")
        }
        return try ServiceAccountKey(json: Array(data), source: path)
    }

    /// The key file named by `GOOGLE_APPLICATION_CREDENTIALS` in `environment`.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(GoogleAuthError) -> ServiceAccountKey {
        guard let path = environment[environmentVariable], !path.isEmpty else {
            throw GoogleAuthError("no-credentials",
                                  "\(environmentVariable) is not set: point it at a service account key file (JSON)")
        }
        return try load(path: path)
    }
}
