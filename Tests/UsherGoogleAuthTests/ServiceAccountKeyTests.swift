import COpenSSL
import Foundation
import Testing
import UsherGoogleAuth
import UsherJSON

@Suite struct ServiceAccountKeyTests {
    @Test func loadsAGoogleKeyFileFromTheEnvironment() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("key.json", keyFileJSON(pem: TestKeyPair.rsa.privatePEM))
        let key = try ServiceAccountKey.fromEnvironment(["GOOGLE_APPLICATION_CREDENTIALS": path])
        #expect(key.projectID == "usher-test")
        #expect(key.privateKeyID == "kid-0123456789abcdef")
        #expect(key.clientEmail == "usher@usher-test.iam.gserviceaccount.com")
        #expect(key.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(key.source == path)
    }

    @Test func jwtIsSignedRS256WithTheRightClaims() throws {
        let key = try ServiceAccountKey(json: keyFileJSON(pem: TestKeyPair.rsa.privatePEM), source: "key.json")
        let issued = Date(timeIntervalSince1970: 1_800_000_000.75)
        let jwt = try key.signedJWT(scope: "https://www.googleapis.com/auth/datastore", issuedAt: issued)
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)

        let header = try jwtPart(parts[0])
        #expect(string(header["alg"]) == "RS256")
        #expect(string(header["typ"]) == "JWT")
        #expect(string(header["kid"]) == "kid-0123456789abcdef")

        let claims = try jwtPart(parts[1])
        #expect(string(claims["iss"]) == "usher@usher-test.iam.gserviceaccount.com")
        #expect(string(claims["scope"]) == "https://www.googleapis.com/auth/datastore")
        #expect(string(claims["aud"]) == "https://oauth2.googleapis.com/token")
        #expect(number(claims["iat"]) == "1800000000")
        #expect(number(claims["exp"]) == "1800003600")

        let signature = try #require(base64URLDecode(parts[2]))
        let signed = Array("\(parts[0]).\(parts[1])".utf8)
        #expect(TestKeyPair.rsa.verifies(signature, of: signed))
        // The check itself can fail: a changed claim, or another key, does not verify.
        #expect(!TestKeyPair.rsa.verifies(signature, of: signed.dropLast() + [UInt8(ascii: "x")]))
        let other = TestKeyPair(type: usher_evp_pkey_rsa(), rsaBits: 1024)
        #expect(!other.verifies(signature, of: signed))
    }

    @Test func escapesWhatJSONNeeds() throws {
        let key = try ServiceAccountKey(json: keyFileJSON(pem: TestKeyPair.rsa.privatePEM,
                                                          replacing: ["private_key_id": "a\"b\\c"]), source: "key.json")
        let jwt = try key.signedJWT(scope: "one two", issuedAt: Date(timeIntervalSince1970: 0))
        let header = try jwtPart(jwt.split(separator: ".")[0])
        #expect(string(header["kid"]) == "a\"b\\c")
    }

    /// Each bad key file: the error's code, and words its message must have (the file's name first).
    @Test(arguments: [
        (["type": "authorized_user"], "bad-field", "'type' is 'authorized_user'"),
        (["type": nil], "missing-field", "no 'type' field"),
        (["project_id": nil], "missing-field", "no 'project_id' field"),
        (["private_key_id": nil], "missing-field", "no 'private_key_id' field"),
        (["private_key": nil], "missing-field", "no 'private_key' field"),
        (["client_email": ""], "bad-field", "'client_email' is empty"),
        (["token_uri": nil], "missing-field", "no 'token_uri' field"),
        (["token_uri": "oauth2.googleapis.com/token"], "bad-field", "'token_uri' is 'oauth2.googleapis.com/token', not an http(s) URL"),
        (["private_key": "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n"], "bad-private-key",
         "'private_key' is not a PEM private key"),
        (["private_key": "hello"], "bad-private-key", "'private_key' is not a PEM private key"),
    ] as [([String: String?], String, String)])
    func badKeyFiles(replacing: [String: String?], code: String, words: String) throws {
        let error = #expect(throws: GoogleAuthError.self) {
            try ServiceAccountKey(json: keyFileJSON(pem: TestKeyPair.rsa.privatePEM, replacing: replacing), source: "/keys/prod.json")
        }
        #expect(error?.code == code)
        #expect(error?.message.hasPrefix("/keys/prod.json: ") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(words) == true, "\(error?.message ?? "")")
    }

    @Test func aKeyThatIsNotRSA() throws {
        let ed25519 = TestKeyPair(type: usher_evp_pkey_ed25519())
        let error = #expect(throws: GoogleAuthError.self) {
            try ServiceAccountKey(json: keyFileJSON(pem: ed25519.privatePEM), source: "ed.json")
        }
        #expect(error?.code == "not-rsa")
        #expect(error?.message == "ed.json: 'private_key' is an ED25519 key, not RSA (RS256 needs RSA)")
    }

    @Test func fieldOfTheWrongType() throws {
        var json = keyFileJSON(pem: TestKeyPair.rsa.privatePEM)
        json.removeLast()
        json += Array(",\"extra\":1}".utf8)
        #expect(throws: Never.self) { try ServiceAccountKey(json: json, source: "k.json") }
        let numbered = String(decoding: keyFileJSON(pem: TestKeyPair.rsa.privatePEM), as: UTF8.self)
            .replacingOccurrences(of: "\"project_id\":\"usher-test\"", with: "\"project_id\":42")
        let error = #expect(throws: GoogleAuthError.self) { try ServiceAccountKey(json: Array(numbered.utf8), source: "k.json") }
        #expect(error?.code == "bad-field")
        #expect(error?.message == "k.json: 'project_id' is a number, not a non-empty string")
    }

    @Test func notJSON() throws {
        for text in ["", "{\"type\":", "[1,2]", "not json"] {
            let error = #expect(throws: GoogleAuthError.self) { try ServiceAccountKey(json: Array(text.utf8), source: "k.json") }
            #expect(error?.code == "bad-key-file")
            #expect(error?.message.hasPrefix("k.json: not a JSON key file: ") == true, "\(error?.message ?? "")")
        }
    }

    @Test func missingFileAndUnsetVariable() throws {
        let missing = #expect(throws: GoogleAuthError.self) { try ServiceAccountKey.load(path: "/nonexistent/usher/key.json") }
        #expect(missing?.code == "unreadable-key-file")
        #expect(missing?.message.hasPrefix("/nonexistent/usher/key.json: ") == true)
        for environment in [[:], ["GOOGLE_APPLICATION_CREDENTIALS": ""]] {
            let unset = #expect(throws: GoogleAuthError.self) { try ServiceAccountKey.fromEnvironment(environment) }
            #expect(unset?.code == "no-credentials")
            #expect(unset?.message.contains("GOOGLE_APPLICATION_CREDENTIALS") == true)
        }
    }
}

func string(_ value: JSONValue?) -> String? {
    if case let .string(s)? = value?.kind { return s }
    return nil
}

func number(_ value: JSONValue?) -> String? {
    if case let .number(s)? = value?.kind { return s }
    return nil
}
