import Foundation
import Testing

/// `usher run BOT --store stdio`: any backend can pipe JSON lines through Usher.
@Suite("Worker as a pipe (stdio)")
struct StdioPipeTests {
    func run(_ input: String, db: String) throws -> (status: Int32, out: [String], err: String) {
        let p = Process()
        p.executableURL = try usherBinary()
        p.arguments = ["run", repoRoot.appendingPathComponent("bots/support").path, "--store", "stdio:\(db)", "--log-level", "warning"]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        p.standardInput = stdin
        p.standardOutput = stdout
        p.standardError = stderr
        try p.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: out, as: UTF8.self).split(separator: "\n").map(String.init),
                String(decoding: err, as: UTF8.self))
    }

    @Test func linesInActionsOutExactlyOnce() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let lines = (1...4).map { i in
            #"{"conversation":"c-1","id":"m-\#(i)","at":"2026-11-30T02:00:0\#(i)Z","from":"customer","sender_id":"u-7","sender_name":"Pooja","text":"message \#(i)"}"#
        }
        let input = lines[0] + "\n" + lines[1] + "\nnot json\n" + lines[2] + "\n" + lines[3] + "\n"
        let first = try run(input, db: scratch.db)
        #expect(first.status == 0)
        let types = first.out.compactMap { line -> String? in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["type"] as? String
        }
        #expect(types == ["reply", "reply", "reply", "system", "handoff", "notification"], "\(first.out)")
        #expect(first.err.contains("stdin:3: error:"), "the bad line is reported with its number")
        // The same input again (a restart that replays its input): nothing is emitted twice.
        let again = try run(input, db: scratch.db)
        #expect(again.status == 0)
        #expect(again.out.isEmpty, "\(again.out)")
    }
}
