import Foundation
import Testing
import UsherTranscripts

@Suite("gzip transcripts")
struct GzipTranscriptTests {
    /// A turns-shape transcript of `n` conversations.
    func transcript(_ n: Int) -> String {
        (0..<n).map { #"{"id":"c\#($0)","turns":[{"role":"user","content":"I want a refund for order \#($0)"},{"role":"agent","content":"Sure."}]}"# }
            .joined(separator: "\n") + "\n"
    }

    func ids(_ path: String) throws -> [String] {
        let reader = try TranscriptReader(path: path)
        var out: [String] = []
        while let r = try reader.next() {
            if case let .conversation(c) = r { out.append(c.id) }
        }
        return out
    }

    @Test func recognisedByContentNotByName() throws {
        let dir = try replayScratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = transcript(3000)   // > 64 KiB: several stored blocks and several reads
        let gz = try replayWrite(GzipFixture.stored(Array(text.utf8)), "looks-plain.jsonl", in: dir)
        let plain = try replayWrite(Array(text.utf8), "looks-compressed.jsonl.gz", in: dir)
        let expected = (0..<3000).map { "c\($0)" }
        #expect(try ids(gz) == expected)
        #expect(try ids(plain) == expected)
        #expect(try TranscriptReader(path: gz).isGzip)
        #expect(try !TranscriptReader(path: plain).isGzip)
    }

    @Test func concatenatedMembersReadAsOneStream() throws {
        let dir = try replayScratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = GzipFixture.stored(Array(#"{"id":"a","turns":[]}"#.utf8) + [0x0A])
        let b = GzipFixture.stored(Array(#"{"id":"b","turns":[]}"#.utf8))
        #expect(try ids(replayWrite(a + b, "two.gz", in: dir)) == ["a", "b"])
    }

    @Test func truncatedAndCorruptDataAreFileErrors() throws {
        let dir = try replayScratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let whole = GzipFixture.stored(Array(transcript(50).utf8))
        let truncated = try replayWrite(whole.prefix(whole.count - 100), "cut.gz", in: dir)
        do {
            _ = try ids(truncated)
            Issue.record("a truncated gzip file read without error")
        } catch let e as TranscriptError {
            #expect(e.code == "corrupt-gzip" && !e.isLineError)
            #expect(e.message.hasPrefix("the gzip data ends early (truncated file?)"))
        }
        var bad = whole
        bad[3] = 0xE0   // reserved header flags
        do {
            _ = try ids(try replayWrite(bad, "bad.gz", in: dir))
            Issue.record("a corrupt gzip file read without error")
        } catch let e as TranscriptError {
            #expect(e.code == "corrupt-gzip" && !e.isLineError)
            #expect(e.message.hasPrefix("corrupt gzip data: "))
            #expect(e.message.hasSuffix(" (before the first line)"), "no line was read: \(e.message)")
        }
    }

    @Test func checkedInSliceOfTheDataSet() throws {
        // Real deflate data (gzip -9), as downloaded data sets come.
        let path = replayRepoRoot.appendingPathComponent("bots/support/transcripts/cucom-300.jsonl.gz").path
        let reader = try TranscriptReader(path: path)
        #expect(reader.isGzip)
        var conversations = 0, turns = 0
        var roles: [String: Int] = [:]
        while let r = try reader.next() {
            guard case let .conversation(c) = r else { Issue.record("not a turns line"); continue }
            conversations += 1
            turns += c.messages.count
            for m in c.messages { roles[m.message.from.rawValue, default: 0] += 1 }
        }
        #expect(conversations == 300)
        #expect(reader.line == 300)
        #expect(roles["customer", default: 0] + roles["agent", default: 0] == turns)
        #expect(roles["customer", default: 0] > 1500 && roles["agent", default: 0] > 1500)
        #expect(reader.bytesRead == reader.fileSize)
    }
}
