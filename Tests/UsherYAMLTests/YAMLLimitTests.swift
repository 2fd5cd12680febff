import Testing
import UsherDiagnostics
import UsherTestSupport
import UsherYAML

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hostile and broken input: nothing may crash, hang or take long.
@Suite("YAML limits")
struct YAMLLimitTests {
    @Test(arguments: ["[", "{", "- ", "{a: ", "[{a: "])
    func deepNestingIsRejectedWithoutCrashing(_ opener: String) {
        let text = String(repeating: opener, count: 100_000)
        var result: (YAMLDocument?, [Diagnostic]) = (nil, [])
        let elapsed = cpuTime { result = load(text, limits: YAMLLimits(maxBytes: 1 << 22, maxDepth: 64)) }
        #expect(result.0 == nil)
        #expect(result.1.map(\.code) == ["too-deep"])
        #expect(result.1.first?.message == "nesting is deeper than 64 levels")
        #expect(elapsed < .seconds(2))
    }

    @Test func depthIsCountedInCollections() {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(load(ok).1.isEmpty)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(summary(load(deep).1) == ["too-deep@1:65"])
    }

    @Test func aliasBombIsRejectedQuickly() {
        var text = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
        var previous = "a"
        for name in "bcdefghijklmnopqrstuvwxyz" {
            text += "\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ",") + "]\n"
            previous = String(name)
        }
        var result: (YAMLDocument?, [Diagnostic]) = (nil, [])
        let elapsed = cpuTime { result = load(text) }
        #expect(elapsed < .seconds(1))
        let codes = result.1.map(\.code)
        #expect(codes.filter { $0 == "anchor" }.count == 20)
        #expect(codes.filter { $0 == "alias" }.count == 20)
        #expect(Set(codes) == ["anchor", "alias"])
        // Aliases are placeholders, never copies.
        #expect(result.0?.root?["z"]?.sequence?.allSatisfy(\.isNull) == true)
    }

    @Test func largeFlatFilesAreFine() {
        let text = (0..<20_000).map { "key\($0): value \($0)\n" }.joined()
        let (document, diagnostics) = load(text)
        #expect(diagnostics.isEmpty)
        #expect(document?.root?.mapping?.count == 20_000)
        #expect(document?.root?["key19999"]?.start == Mark(line: 20_000, column: 11))
    }

    @Test func manyDuplicatesStayFast() {
        let text = String(repeating: "a: 1\n", count: 10_000)
        let (document, diagnostics) = load(text)
        #expect(diagnostics.count == 9_999)
        #expect(document != nil)
    }

    private func temporaryFile(_ bytes: [UInt8]) throws -> String {
        var template = Array("/tmp/usher-yaml-test-XXXXXX.yaml".utf8CString)
        let fd = mkstemps(&template, 5)
        try #require(fd >= 0)
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        try #require(written == bytes.count)
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test func loadFileReadsAFile() throws {
        let path = try temporaryFile(Array("a: [1, 2]\n".utf8))
        defer { unlink(path) }
        let (document, diagnostics) = YAMLLoader.loadFile(path: path)
        #expect(diagnostics.isEmpty)
        #expect(document?.path == path)
        #expect(document?.root?["a"]?.sequence?.count == 2)
        #expect(document?.root?["a"]?.file == path)
    }

    @Test func loadFileRejectsHugeFilesBeforeReadingThem() throws {
        let path = try temporaryFile([UInt8](repeating: 0x61, count: 2 << 20))
        defer { unlink(path) }
        let (document, diagnostics) = YAMLLoader.loadFile(path: path)
        #expect(document == nil)
        #expect(summary(diagnostics) == ["file-too-large@1:1"])
        #expect(diagnostics.first?.message == "the file is 2.0 MiB; the limit is 1.0 MiB")
    }

    @Test func loadFileReportsUnreadableFiles() {
        let (missing, d1) = YAMLLoader.loadFile(path: "/nonexistent/usher/rules.yaml")
        #expect(missing == nil)
        #expect(d1.map(\.code) == ["unreadable-file"])
        #expect(d1.first?.message == "cannot read the file: no such file")
        #expect(d1.first?.location == SourceLocation(file: "/nonexistent/usher/rules.yaml", line: 1, column: 1))
        let (directory, d2) = YAMLLoader.loadFile(path: "/tmp")
        #expect(directory == nil)
        #expect(d2.map(\.message) == ["cannot read the file: it is a directory"])
    }

    @Test func loadFileOfAnEmptyFile() throws {
        let path = try temporaryFile([])
        defer { unlink(path) }
        let (document, diagnostics) = YAMLLoader.loadFile(path: path)
        #expect(document != nil && document?.root == nil)
        #expect(diagnostics.map(\.code) == ["empty-file"])
    }
}
