internal import COpenSSL

/// An RSA private key parsed by OpenSSL's libcrypto, which signs RS256 (RSASSA-PKCS1-v1_5 with
/// SHA-256). Owns its `EVP_PKEY`, freed in `deinit`.
final class RSAPrivateKey: @unchecked Sendable {
    // @unchecked: the key is not changed after init, and OpenSSL 3 lets several threads use one
    // EVP_PKEY at once as long as each has its own EVP_MD_CTX, which `sign` makes per call.
    private let key: OpaquePointer

    /// Parses `pem` (PKCS#8 `BEGIN PRIVATE KEY`, as Google issues them, or PKCS#1
    /// `BEGIN RSA PRIVATE KEY`); `source` names the file in errors.
    init(pem: String, source: String) throws(GoogleAuthError) {
        ERR_clear_error()
        var text = pem
        // The BIO reads the buffer in place: it is freed before the buffer's scope ends.
        let parsed: OpaquePointer? = text.withUTF8 { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let parsed else {
            throw GoogleAuthError("bad-private-key",
                                  "\(source): 'private_key' is not a PEM private key OpenSSL can read (\(openSSLErrorText()))")
        }
        guard EVP_PKEY_get_base_id(parsed) == usher_evp_pkey_rsa() else {
            let type = String(cString: OBJ_nid2sn(EVP_PKEY_get_base_id(parsed)))
            EVP_PKEY_free(parsed)
            throw GoogleAuthError("not-rsa", "\(source): 'private_key' is an \(type) key, not RSA (RS256 needs RSA)")
        }
        key = parsed
    }

    deinit { EVP_PKEY_free(key) }

    /// The RS256 signature of `message`.
    func sign(_ message: [UInt8]) throws(GoogleAuthError) -> [UInt8] {
        ERR_clear_error()
        guard let context = EVP_MD_CTX_new() else { throw signFailed() }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { throw signFailed() }
        var length = 0
        let measured = message.withUnsafeBufferPointer { EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }
        guard measured == 1 else { throw signFailed() }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = signature.withUnsafeMutableBufferPointer { out in
            message.withUnsafeBufferPointer { EVP_DigestSign(context, out.baseAddress, &length, $0.baseAddress, $0.count) }
        }
        guard signed == 1 else { throw signFailed() }
        return Array(signature.prefix(length))
    }

    private func signFailed() -> GoogleAuthError {
        GoogleAuthError("sign-failed", "signing the token request failed (\(openSSLErrorText()))")
    }
}

/// OpenSSL's text for the errors queued on this thread (emptied), or a word when there is none.
func openSSLErrorText() -> String {
    var texts: [String] = []
    while case let code = ERR_get_error(), code != 0 {
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        texts.append(buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }
    return texts.isEmpty ? "no detail from OpenSSL" : texts.joined(separator: "; ")
}
