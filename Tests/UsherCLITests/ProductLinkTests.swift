import Foundation
import Testing

/// The `usher` executable carries the product only: no module of the benchmarks (`Benchmarks/`)
/// or of the tests' support (`Tests/Support/`) may be linked into it. SwiftPM links every object
/// of a dependency into an executable, so a module that is in its closure has its mangled name
/// (`$s` + length + name + …) in the binary's symbols.
@Suite("usher's link closure")
struct ProductLinkTests {
    /// The modules of the targets under `folder`: SwiftPM's module name is the folder's name with
    /// `-` as `_`.
    static func modules(under folder: String) throws -> [String] {
        let dir = repoRoot.appendingPathComponent(folder)
        return try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { name in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path, isDirectory: &isDirectory)
                    && isDirectory.boolValue
            }
            .map { $0.replacingOccurrences(of: "-", with: "_") }
            .sorted()
    }

    @Test func noBenchmarkOrTestSupportModuleIsLinkedIntoUsher() throws {
        let modules = try Self.modules(under: "Benchmarks") + Self.modules(under: "Tests/Support")
        // What the check looks for must exist, or it would pass on anything.
        #expect(modules.contains("UsherBenchSupport"))
        #expect(modules.contains("UsherPostgresTestServer"))
        #expect(modules.contains("UsherTestSupport"))
        let binary = try Data(contentsOf: try usherExecutable())
        // The check can see a module that is linked: the product's own modules are there.
        for linked in ["UsherRuntime", "UsherStore"] {
            #expect(binary.range(of: Data("\(linked.utf8.count)\(linked)".utf8)) != nil, "\(linked) found in usher")
        }
        for module in modules {
            #expect(binary.range(of: Data("\(module.utf8.count)\(module)".utf8)) == nil,
                    "\(module) (not product) is linked into usher")
        }
    }
}
