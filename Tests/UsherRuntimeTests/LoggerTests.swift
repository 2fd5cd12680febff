import Foundation
import Synchronization
import Testing
import UsherRuntime

/// The log's lines as an operator reads them: one event a line, whatever the ids hold, and
/// repeated warnings throttled by a manual clock.
@Suite struct LoggerTests {
    /// A logger writing into an array, with a clock the test moves.
    final class Capture: Sendable {
        let lines = Mutex<[String]>([])
        let clock = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func logger(_ format: Logger.Format = .logfmt) -> Logger {
            Logger(format: format, now: { self.clock.withLock { $0 } }, sink: { line in self.lines.withLock { $0.append(line) } })
        }
        func advance(_ seconds: TimeInterval) { clock.withLock { $0 = $0.addingTimeInterval(seconds) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test func controlCharactersInIdsAreEscapedNotWritten() throws {
        let capture = Capture()
        let log = capture.logger()
        log.info("reply", ["conversation": "c\0forged", "message": "m\rlevel=error event=fake", "note": "a\nb\tc\u{1B}"])
        let line = try #require(capture.all.first)
        #expect(capture.all.count == 1)
        // One line, no raw control character in it: a NUL or CR cannot cut or overwrite it.
        #expect(line.hasSuffix("\n") && !line.dropLast().contains(where: { $0.isNewline }))
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        #expect(line.contains(#"conversation="c\u0000forged""#), Comment(rawValue: line))
        #expect(line.contains(#"message="m\rlevel=error event=fake""#), Comment(rawValue: line))
        #expect(line.contains(#"note="a\nb\tc\u001b""#), Comment(rawValue: line))
    }

    @Test func plainValuesStayBareAndQuotesAndBackslashesAreEscaped() throws {
        let capture = Capture()
        capture.logger().info("x", ["a": "support", "b": #"say "hi""#, "c": #"C:\x"#, "d": ""])
        let line = try #require(capture.all.first)
        #expect(line.hasSuffix(#"event=x a=support b="say \"hi\"" c="C:\\x" d="""# + "\n"), Comment(rawValue: line))
    }

    @Test func theHTTPServersMessagesAreWrittenOncePerTextAndMinute() throws {
        let capture = Capture()
        let log = capture.logger()
        for _ in 0..<50 { log.warning("http-server", ["message": "refused: too many connections from 127.0.0.3"]) }
        log.warning("http-server", ["message": "another text"])
        #expect(capture.all.count == 2)
        // Messages of a thousand texts: the quiet ones are forgotten once past the bound, the
        // throttle still holds for a text seen within the minute.
        for i in 0..<1_100 { log.warning("http-server", ["message": "text \(i)"]) }
        capture.advance(61)
        log.warning("http-server", ["message": "text 0"])
        #expect(capture.all.count == 2 + 1_100 + 1)
        log.warning("http-server", ["message": "text 0"])
        #expect(capture.all.count == 2 + 1_100 + 1)
    }

    @Test func regexLimitIsWrittenOncePerRuleAndMinute() throws {
        let capture = Capture()
        let log = capture.logger()
        for message in 0..<100 {
            log.warning("regex-limit", ["bot": "b", "rule": "slow", "limit": "match limit", "message": "m\(message)"])
            log.warning("regex-limit", ["bot": "b", "rule": "other", "limit": "time limit", "message": "m\(message)"])
        }
        #expect(capture.all.count == 2)
        capture.advance(59)
        log.warning("regex-limit", ["bot": "b", "rule": "slow", "limit": "match limit", "message": "m100"])
        #expect(capture.all.count == 2)
        capture.advance(1)
        log.warning("regex-limit", ["bot": "b", "rule": "slow", "limit": "match limit", "message": "m101"])
        #expect(capture.all.count == 3)
        // The next line written says how many were left out since the one before.
        #expect(capture.all[2].contains("message=m101 suppressed=100\n"), Comment(rawValue: capture.all[2]))
        // Another bot's rule of the same name is another key; other events are never throttled.
        log.warning("regex-limit", ["bot": "c", "rule": "slow", "limit": "match limit", "message": "m1"])
        for _ in 0..<3 { log.info("reply", ["bot": "b", "rule": "slow"]) }
        #expect(capture.all.count == 7)
    }

    @Test func throttleCanBeTurnedOff() {
        let capture = Capture()
        let log = Logger(throttle: .none, sink: { line in capture.lines.withLock { $0.append(line) } })
        for _ in 0..<5 { log.warning("regex-limit", ["bot": "b", "rule": "slow"]) }
        #expect(capture.all.count == 5)
    }

    @Test func jsonLinesEscapeControlCharacters() throws {
        let capture = Capture()
        capture.logger(.json).info("reply", ["conversation": "c\0\r\n"])
        let line = try #require(capture.all.first)
        #expect(line.contains(#""conversation":"c\u0000\r\n""#), Comment(rawValue: line))
    }
}
