extension UnsafeBufferPointer<UInt8> {
    /// True when every byte is below 0x80.
    var isASCII: Bool {
        let raw = UnsafeRawBufferPointer(self)
        var index = 0
        while index + 8 <= count {
            if raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
                return false
            }
            index += 8
        }
        while index < count {
            if self[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }
}
