import Foundation
import UsherEngine
import UsherSQLite

enum MicroJSON {
    static func run() {
        let bytes = Workload.sampleStateJSON
        let n = 200_000
        var t = ContinuousClock.now
        var x = 0
        for _ in 0..<n {
            x &+= bytes.withUnsafeBufferPointer { try! StateJSON.fastDecode($0).version }
        }
        print("fastDecode \((ContinuousClock.now - t) / n)  (\(bytes.count) bytes)")
        let s = try! bytes.withUnsafeBufferPointer { try StateJSON.fastDecode($0) }
        t = ContinuousClock.now
        for _ in 0..<n { x &+= StateJSON.encode(s).utf8.count }
        print("encode \((ContinuousClock.now - t) / n)", x)
    }
}
