public import UsherJSON

/// A button or link offered with a reply (`quick_replies`), rendered: what the stores write and
/// the adapters hand on. A button (`url` nil) is sent back by the customer's chat as a message
/// of its title; a link opens `url`.
public struct QuickReply: Sendable, Hashable, Codable {
    public var title: String
    /// The address of a link (http or https); nil for a button.
    public var url: String?

    public init(title: String, url: String? = nil) {
        self.title = title
        self.url = url
    }

    /// Whether it is a link rather than a button.
    public var isLink: Bool { url != nil }
}

extension QuickReply {
    /// `[{"title":"Track my order"},{"title":"Returns","url":"https://…"}]`: the JSON every
    /// store and adapter writes them as — the shape `Codable` gives, `url` left out of a button.
    public static func write(_ items: [QuickReply], into w: inout JSONWriter) {
        w.byte(UInt8(ascii: "["))
        for (i, item) in items.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.byte(UInt8(ascii: "{"))
            w.key("title", first: true); w.string(item.title)
            if let url = item.url { w.key("url"); w.string(url) }
            w.byte(UInt8(ascii: "}"))
        }
        w.byte(UInt8(ascii: "]"))
    }

    /// The JSON text of `items`; nil for none, which stores keep as NULL (or leave out).
    public static func json(_ items: [QuickReply]) -> String? {
        guard !items.isEmpty else { return nil }
        var w = JSONWriter(capacity: 64 * items.count)
        write(items, into: &w)
        return w.text
    }

    private static let keys = JSONKeys(["title", "url"])

    /// Reads what `write` wrote (and what `Codable` writes); NULL, empty text or `[]` are none.
    /// Throws `JSONError` on anything else.
    public static func read(json text: String?) throws -> [QuickReply] {
        guard var text, !text.isEmpty else { return [] }
        return try text.withUTF8 { bytes in
            var r = JSONReader(bytes)
            var items: [QuickReply] = []
            if try r.null() { return [] }
            try r.array { r in
                var title: String?
                var url: String?
                try r.object(keys: keys) { r, k in
                    switch k {
                    case 0: title = try r.string()
                    case 1: url = try r.null() ? nil : try r.string()
                    default: _ = try r.value()
                    }
                }
                guard let title else { throw JSONError("a quick reply without a title", at: r.offset) }
                items.append(QuickReply(title: title, url: url))
            }
            try r.end()
            return items
        }
    }
}

extension QuickReply: CustomStringConvertible {
    /// `[Track my order]`, `[Returns → https://shop.example/returns]`: as `usher chat`,
    /// `explain`, `test` and `replay` show them.
    public var description: String { url.map { "[\(title) → \($0)]" } ?? "[\(title)]" }

    /// The items one after another on one line.
    public static func line(_ items: [QuickReply]) -> String { items.map(\.description).joined(separator: " ") }
}
