
/// What a store URL shows of itself (DESIGN.md §6): secrets come from the URL or the
/// environment and are never printed. The stores themselves are listed in `Stores`.
enum StoreURL {
    /// The URL without its secrets — the user part's password, `password=` and `sslpassword=`
    /// (in the query, or in text that is not a URL at all) — for messages and logs.
    static func redacted(_ url: String) -> String {
        var out = url
        // The password of the user info: after its first ':', up to the last '@' of the
        // authority (a password may hold an '@' that was not percent-encoded).
        if let scheme = out.range(of: "://") {
            let authorityEnd = out[scheme.upperBound...].firstIndex { $0 == "/" || $0 == "?" } ?? out.endIndex
            if let at = out[scheme.upperBound..<authorityEnd].lastIndex(of: "@"),
               let colon = out[scheme.upperBound..<at].firstIndex(of: ":") {
                out = String(out[..<colon]) + ":***" + String(out[at...])
            }
        }
        // `password=` and `sslpassword=` (a client key's passphrase), in a URL's query or in
        // keyword=value text, the key kept as written: each at the start or after '?', '&' or a
        // space, its value up to the next '&' or space, or quoted as libpq quotes keyword values.
        let c = Array(out)
        var masked = ""
        var i = 0
        while i < c.count {
            if i == 0 || c[i - 1] == "?" || c[i - 1] == "&" || c[i - 1].isWhitespace, let valueStart = secretValue(c, at: i) {
                masked += String(c[i..<valueStart]) + "***"
                var j = valueStart
                if j < c.count, c[j] == "'" {
                    j += 1
                    while j < c.count, c[j] != "'" { j += c[j] == "\\" ? 2 : 1 }
                    j = min(j + 1, c.count)
                } else {
                    while j < c.count, c[j] != "&", !c[j].isWhitespace { j += 1 }
                }
                i = j
            } else {
                masked.append(c[i])
                i += 1
            }
        }
        return masked
    }

    /// Where the value starts when a secret's key (`password` or `sslpassword`, any case) and
    /// its '=' stand at `i`; else nil.
    private static func secretValue(_ c: [Character], at i: Int) -> Int? {
        for key in ["sslpassword", "password"] where c.count - i >= key.count
            && String(c[i..<i + key.count]).lowercased() == key {
            var j = i + key.count
            while j < c.count, c[j] == " " { j += 1 }
            guard j < c.count, c[j] == "=" else { return nil }
            j += 1
            while j < c.count, c[j] == " " { j += 1 }
            return j
        }
        return nil
    }
}
