import Foundation
import UsherEngine
import UsherSQLite
import UsherStore

/// `--micro-json`: the state JSON codec alone, on the sample state (whole seconds) and on the
/// state the store loops write (fractional seconds, as real clocks give).
enum MicroJSON {
    static func run() {
        measure("whole seconds", Workload.sampleStateJSON)
        let m = StoredMessage(seq: 1, id: "m-1", conversationID: "c-1", from: .customer, senderID: "u-1",
                              senderName: "Pooja", text: Workload.text, at: Workload.t0.addingTimeInterval(0.123),
                              channel: "web", locale: "en")
        var s: ConversationState?
        for _ in 0..<5 { s = Workload.next(s, for: m) }
        measure("fractional seconds", Array(StateJSON.encode(s!).utf8))
    }

    private static func measure(_ name: String, _ bytes: [UInt8]) {
        let n = 200_000
        var t = ContinuousClock.now
        var x = 0
        for _ in 0..<n {
            x &+= bytes.withUnsafeBufferPointer { try! StateJSON.fastDecode($0).version }
        }
        print("\(name): fastDecode \((ContinuousClock.now - t) / n)  (\(bytes.count) bytes)")
        let s = try! bytes.withUnsafeBufferPointer { try StateJSON.fastDecode($0) }
        t = ContinuousClock.now
        for _ in 0..<n { x &+= StateJSON.encode(s).utf8.count }
        print("\(name): encode \((ContinuousClock.now - t) / n)", x)
    }
}
