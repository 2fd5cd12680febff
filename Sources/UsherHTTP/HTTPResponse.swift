/// What a server answered: any status, 1xx interim answers left out.
public struct HTTPResponse: Sendable {
    /// The status code (`200`, `404`, …).
    public var status: Int
    /// The header fields of the final answer, in the order received, names as the server wrote them.
    public var headers: [(name: String, value: String)]
    /// The body, decoded from chunked transfer encoding (but not decompressed: the client asks for
    /// no content encoding).
    public var body: [UInt8]

    /// A response (what `HTTPClient.send` returns; public for test doubles of its callers).
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the first header field named `name`, compared without regard to ASCII case.
    public func header(_ name: String) -> String? {
        for field in headers where asciiCaseInsensitiveEqual(field.name, name) { return field.value }
        return nil
    }
}

/// Header names are ASCII tokens: a byte comparison folding A–Z, without building lowercased
/// strings on every lookup.
func asciiCaseInsensitiveEqual(_ a: String, _ b: String) -> Bool {
    var a = a.utf8.makeIterator()
    var b = b.utf8.makeIterator()
    while true {
        switch (a.next(), b.next()) {
        case (nil, nil): return true
        case let (x?, y?):
            if x == y { continue }
            let lx = x &- 0x41 < 26 ? x | 0x20 : x
            let ly = y &- 0x41 < 26 ? y | 0x20 : y
            if lx != ly { return false }
        default: return false
        }
    }
}
