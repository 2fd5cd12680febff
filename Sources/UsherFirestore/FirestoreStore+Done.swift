import Foundation
import UsherJSON

/// The messages done in a conversation, as its state document keeps them: each id done within
/// the look-back of the newest, with the time of the message.
///
/// Written as one string field holding a JSON object (`done: '{"m1":"2026-12-06T03:00:00.000000Z"}'`),
/// not as a map: Firestore (and its emulator) indexes every field of a map, so a map of ten ids
/// costs each commit twenty-odd index entries where one string costs one (docs/decisions.md,
/// 2026-12-06). A state document written as a map before reads the same.
struct DoneMarks: Sendable, Equatable {
    let times: [String: Date]
    /// The time of the newest message done.
    let newest: Date?

    init(_ times: [String: Date] = [:]) {
        self.times = times
        newest = times.values.max()
    }

    /// The marks of a state document (none without one).
    init(_ state: FirestoreDocument?) {
        switch state?.fields["done"] {
        case let .string(text)?:
            var times: [String: Date] = [:]
            let json = try? Array(text.utf8).withUnsafeBufferPointer { try JSONReader.parse($0) }
            if case let .object(members)? = json?.kind {
                for m in members {
                    if case let .string(t) = m.value.kind, let date = FirestoreTime.parse(t) { times[m.key] = date }
                }
            }
            self.init(times)
        case let .map(fields)?:
            self.init(fields.compactMapValues { $0.date() })
        default:
            self.init()
        }
    }

    func contains(_ id: String) -> Bool { times[id] != nil }

    /// With `id` done at `at`, and without those more than `lookback` behind the newest.
    func adding(_ id: String, at: Date, lookback: Double) -> DoneMarks {
        var times = self.times
        times[id] = at
        let floor = (times.values.max() ?? at).addingTimeInterval(-lookback)
        return DoneMarks(times.filter { $0.value >= floor })
    }

    /// The field's value: ids in order, so that the same marks write the same text.
    var value: FirestoreValue {
        var w = JSONWriter(capacity: 48 * times.count + 2)
        w.byte(UInt8(ascii: "{"))
        for (i, id) in times.keys.sorted().enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.string(id)
            w.byte(UInt8(ascii: ":"))
            w.string(FirestoreTime.format(times[id]!))
        }
        w.byte(UInt8(ascii: "}"))
        return .string(w.text)
    }
}
