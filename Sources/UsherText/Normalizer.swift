/// String-level entry points to the normalisation that `NormalizedText` applies to messages.
public enum Normalizer {
    /// The normalised form of `s`: NFKC, full case folding, invisible characters removed, white
    /// space collapsed and trimmed, accents kept. Equal to `NormalizedText(s).exact` without the
    /// length cap.
    public static func normalize(_ s: String) -> String {
        String(decoding: NormalizedText(s, maxBytes: .max).exact, as: UTF8.self)
    }

    /// `normalized` with accents folded (`é` → `e`). Normalises first if it was not normalised.
    public static func foldAccents(_ normalized: String) -> String {
        String(decoding: NormalizedText(normalized, maxBytes: .max).folded, as: UTF8.self)
    }

    /// True if `s`, once normalised, contains a letter with a diacritic, so a keyword made of it
    /// should be matched against `NormalizedText.exact` rather than `.folded`.
    public static func hasAccent(_ s: String) -> Bool {
        let text = NormalizedText(s, maxBytes: .max)
        return text.exact != text.folded
    }
}
