/// The characters a one-character item may match, over-approximated: the ASCII ones exactly, the
/// others only as word characters, white space, or anything else.
struct CharSet: Sendable, Equatable {
    var low: UInt64 = 0    // ASCII 0..<64
    var high: UInt64 = 0   // ASCII 64..<128
    var other: UInt8 = 0   // non-ASCII kinds
    /// True when the ASCII part is exact (not an over-approximation), so it may be negated.
    var isExact = true

    static let word: UInt8 = 1, space: UInt8 = 2, rest: UInt8 = 4

    static let any = CharSet(low: ~0, high: ~0, other: 7, isExact: false)
    static let digits = CharSet(ascii: "0123456789", other: word)
    static let wordChars = CharSet(ascii: "0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", other: word)
    static let letters = CharSet(ascii: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", other: word)
    static let spaces = CharSet(ascii: " \t\n\r\u{0B}\u{0C}", other: space)

    init(low: UInt64, high: UInt64, other: UInt8, isExact: Bool) {
        self.low = low
        self.high = high
        self.other = other
        self.isExact = isExact
    }

    init(ascii: String = "", other: UInt8 = 0) {
        for scalar in ascii.unicodeScalars { insertASCII(scalar.value) }
        self.other = other
    }

    /// The set of one character, both cases of it when `caseless`.
    init(_ scalar: Unicode.Scalar, caseless: Bool) {
        insert(scalar, caseless: caseless)
    }

    mutating func insertASCII(_ value: UInt32) {
        if value < 64 { low |= 1 << UInt64(value) } else { high |= 1 << UInt64(value - 64) }
    }

    mutating func insert(_ scalar: Unicode.Scalar, caseless: Bool) {
        let value = scalar.value
        if value < 0x80 {
            insertASCII(value)
            let lower = value | 0x20
            if caseless && lower >= 0x61 && lower <= 0x7A {
                insertASCII(lower)
                insertASCII(lower & ~0x20)
                // In UTF mode k and s also match KELVIN SIGN and LATIN SMALL LETTER LONG S.
                if lower == 0x6B || lower == 0x73 { other |= Self.word }
            }
            return
        }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark,
             .connectorPunctuation:
            other |= Self.word
        default:
            other |= properties.isWhitespace ? Self.space : Self.rest
        }
        if caseless && properties.isCased {
            // Some non-ASCII letters fold to ASCII ones (KELVIN SIGN to k).
            self = union(Self.letters)
            isExact = false
        }
    }

    func union(_ other: CharSet) -> CharSet {
        CharSet(low: low | other.low, high: high | other.high, other: self.other | other.other,
                isExact: isExact && other.isExact)
    }

    /// Every character the set does not contain (over-approximated).
    var negated: CharSet {
        isExact ? CharSet(low: ~low, high: ~high, other: 7, isExact: false) : .any
    }

    func isDisjoint(with other: CharSet) -> Bool {
        low & other.low == 0 && high & other.high == 0 && self.other & other.other == 0
    }
}
