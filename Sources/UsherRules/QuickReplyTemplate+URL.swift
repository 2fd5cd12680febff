extension QuickReplyTemplate {
    /// What is wrong with a link's `url` as written (its template source), and where: the
    /// offset in Unicode scalars into the text, for the diagnostic's column. Nil when it is an
    /// `http` or `https` address with its host written out, and nothing in its text a browser
    /// would have to guess at (spaces, quotes, a `%` that starts no escape). Placeholders
    /// (`{{order}}`) are not looked into: their values are percent-encoded when rendered.
    public static func problem(inURL source: String) -> (offset: Int, message: String)? {
        let scalars = Array(source.unicodeScalars)
        // Which scalars are inside a `{{…}}` placeholder.
        var placeholder = [Bool](repeating: false, count: scalars.count)
        var i = 0
        while i + 1 < scalars.count {
            if scalars[i] == "{", scalars[i + 1] == "{" {
                var j = i + 2
                while j + 1 < scalars.count, !(scalars[j] == "}" && scalars[j + 1] == "}") { j += 1 }
                let end = min(j + 2, scalars.count)
                for k in i..<end { placeholder[k] = true }
                i = end
            } else {
                i += 1
            }
        }

        let lower = source.lowercased()
        let scheme = lower.hasPrefix("https://") ? 8 : lower.hasPrefix("http://") ? 7 : nil
        guard let scheme else {
            if let colon = scalars.firstIndex(of: ":"), colon > 0, scalars[..<colon].allSatisfy(\.properties.isAlphabetic),
               !placeholder[colon] {
                let name = String(String.UnicodeScalarView(scalars[..<colon]))
                return (0, "a link opens a web address (https:// or http://), not a '\(name):' address")
            }
            let host = scalars.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            // The address with its scheme (and its spaces escaped), offered when that is all it lacks.
            let fixed = "https://" + source.replacingOccurrences(of: " ", with: "%20")
            if host.contains("."), !host.contains(" "), !placeholder.prefix(host.count).contains(true), problem(inURL: fixed) == nil {
                return (0, "a link's address starts with https://; write '\(fixed)'")
            }
            return (0, "'\(source)' is not a web address; a link's url starts with https:// (or http://) and its host, like 'https://shop.example/returns'")
        }

        var at = scheme
        let hostStart = at
        while at < scalars.count, !["/", "?", "#"].contains(scalars[at]) {
            if placeholder[at] {
                return (at, "the host of a link is written out, not a template variable; put variables in the path or query, like 'https://shop.example/track/{{order}}'")
            }
            let c = scalars[at]
            if c == "@" {
                return (at, "a link's address cannot carry a user name or password ('@' before the host)")
            }
            if !(c.properties.isAlphabetic || c.properties.numericType != nil || c == "-" || c == "." || c == ":" || c == "[" || c == "]") {
                return (at, problem(with: c) ?? "'\(c)' cannot be part of a host name")
            }
            at += 1
        }
        if at == hostStart {
            return (hostStart, "the address has no host after '\(String(String.UnicodeScalarView(scalars[..<scheme])))'; write one, like 'https://shop.example/returns'")
        }
        while at < scalars.count {
            if !placeholder[at] {
                let c = scalars[at]
                if c == "%" {
                    let hex = scalars.dropFirst(at + 1).prefix(2)
                    if hex.count < 2 || !hex.allSatisfy({ $0.properties.isASCIIHexDigit }) {
                        return (at, "'%' starts an escape of two hex digits, like %20; write %25 for a percent sign")
                    }
                } else if let message = problem(with: c) {
                    return (at, message)
                }
            }
            at += 1
        }
        return nil
    }

    /// Why a character cannot stand as it is in a URL, or nil when it can.
    private static func problem(with c: Unicode.Scalar) -> String? {
        if c == " " { return "a url cannot contain a space; write it as %20" }
        if c.value < 0x20 || c.value == 0x7F || c.properties.isWhitespace { return "a url cannot contain a line break, a tab or another invisible character" }
        if "\"<>\\^`{|}".unicodeScalars.contains(c) { return "'\(c)' cannot stand in a url as it is; percent-encode it (%\(String(c.value, radix: 16, uppercase: true)))" }
        return nil
    }

    /// A placeholder's value in a link: every byte but RFC 3986's unreserved characters
    /// percent-encoded, so that a captured `a/b?c` stays one piece of the path or query.
    public static func encodeForURL(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (byte < 0x10 ? "0" : "") + hex
            }
        }
        return out
    }
}
