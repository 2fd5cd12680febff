// swift-tools-version: 6.0
// Usher — a rule-driven auto-reply worker for customer-support chat.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Usher",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "usher", targets: ["usher"]),
    ],
    targets: [
        // C shims: a module map and a shim header each, nothing else.
        .systemLibrary(name: "CYAML", path: "Sources/CYAML", pkgConfig: "yaml-0.1",
                       providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CPCRE2", path: "Sources/CPCRE2", pkgConfig: "libpcre2-8",
                       providers: [.apt(["libpcre2-dev"])]),
        // ICU's headers clash with Foundation's own ICU module, so normalisation goes through a
        // tiny C wrapper whose header exposes plain C types only.
        .target(name: "CUsherICU", path: "Sources/CUsherICU",
                linkerSettings: [.linkedLibrary("icuuc")]),

        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),

        .target(name: "UsherDiagnostics", swiftSettings: strict),
        .target(name: "UsherYAML", dependencies: ["CYAML", "UsherDiagnostics"], swiftSettings: strict),
        .target(name: "UsherText", dependencies: ["CPCRE2", "CUsherICU"], swiftSettings: strict),
        .target(name: "UsherRules", dependencies: ["UsherYAML", "UsherText", "UsherDiagnostics"],
                swiftSettings: strict),
        // The mapping file of the SQL adapters; read with UsherRules' NodeReader, like bot files.
        .target(name: "UsherSQLMapping", dependencies: ["UsherYAML", "UsherDiagnostics", "UsherRules"],
                swiftSettings: strict),
        .target(name: "UsherEngine", dependencies: ["UsherRules", "UsherText"], swiftSettings: strict),
        .target(name: "UsherStore", dependencies: ["UsherEngine"], swiftSettings: strict),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "UsherSQLite", dependencies: ["UsherStore", "UsherEngine", "CSQLite"], swiftSettings: strict),
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        .target(name: "UsherPostgres",
                dependencies: ["UsherStore", "UsherEngine", "UsherRules", "UsherSQLMapping", "UsherDiagnostics", "CLibPQ"], swiftSettings: strict),
        // A throwaway PostgreSQL server (initdb in a temporary directory, a Unix socket) for
        // tests and benchmarks: no system service is touched.
        .target(name: "UsherPostgresTestServer", swiftSettings: strict),
        .target(name: "UsherBenchSupport", dependencies: ["UsherRuntime", "UsherStore", "UsherEngine"],
                swiftSettings: strict),
        .executableTarget(name: "usher-pg-bench",
                          dependencies: ["UsherPostgres", "UsherPostgresTestServer", "UsherRuntime", "UsherRules",
                                         "UsherStore", "UsherEngine", "UsherBenchSupport"],
                          swiftSettings: strict),
        .target(name: "UsherStdio", dependencies: ["UsherStore", "UsherSQLite", "UsherEngine"], swiftSettings: strict),
        .executableTarget(name: "usher-store-bench", dependencies: ["UsherSQLite", "UsherStore", "UsherEngine", "CSQLite",
                                                                 "UsherRuntime", "UsherBenchSupport"],
                          swiftSettings: strict),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .target(name: "UsherRuntime", dependencies: ["UsherStore", "UsherEngine", "UsherRules", "UsherDiagnostics", "CMicroHTTPD"],
                swiftSettings: strict),
        .target(name: "UsherTranscripts",
                dependencies: ["UsherEngine", "UsherRules", "UsherText", "UsherYAML", "UsherDiagnostics", "CZlib"],
                swiftSettings: strict),
        .executableTarget(name: "usher",
                          dependencies: ["UsherEngine", "UsherRules", "UsherDiagnostics", "UsherYAML", "UsherTranscripts",
                                         "UsherStore", "UsherRuntime", "UsherSQLite", "UsherStdio", "UsherSQLMapping",
                                         "UsherPostgres"],
                          swiftSettings: strict),
        .executableTarget(name: "usher-bench",
                          dependencies: ["UsherEngine", "UsherRules", "UsherText", "UsherTranscripts",
                                         "UsherStore", "UsherSQLite", "UsherRuntime", "UsherBenchSupport"],
                          swiftSettings: strict),
        // libFuzzer harnesses: built only with `swift build --sanitize=fuzzer --product …`.
        .executableTarget(name: "FuzzYAML", dependencies: ["UsherRules", "UsherYAML"],
                          swiftSettings: strict),
        .executableTarget(name: "FuzzText", dependencies: ["UsherText"], swiftSettings: strict),

        // What tests of several targets share (`cpuTime`, `eventually`); not linked into any product.
        .target(name: "UsherTestSupport", path: "Tests/UsherTestSupport", swiftSettings: strict),
        .testTarget(name: "UsherYAMLTests", dependencies: ["UsherYAML", "UsherTestSupport"]),
        .testTarget(name: "UsherTextTests", dependencies: ["UsherText", "UsherTestSupport"]),
        .testTarget(name: "UsherRulesTests", dependencies: ["UsherRules", "UsherYAML", "UsherTestSupport"]),
        .testTarget(name: "UsherSQLMappingTests", dependencies: ["UsherSQLMapping", "UsherDiagnostics"]),
        .testTarget(name: "UsherEngineTests", dependencies: ["UsherEngine", "UsherRules", "UsherTestSupport"]),
        .testTarget(name: "UsherStoreTests", dependencies: ["UsherStore", "UsherEngine", "UsherRules"]),
        .testTarget(name: "UsherSQLiteTests", dependencies: ["UsherSQLite", "UsherStore", "UsherEngine"]),
        .testTarget(name: "UsherPostgresTests",
                    dependencies: ["UsherPostgres", "UsherPostgresTestServer", "UsherStore", "UsherEngine", "UsherSQLMapping",
                                   "UsherDiagnostics", "UsherTestSupport"]),
        .testTarget(name: "UsherStdioTests", dependencies: ["UsherStdio", "UsherSQLite", "UsherStore", "UsherEngine"]),
        .testTarget(name: "UsherRuntimeTests", dependencies: ["UsherRuntime", "UsherStore", "UsherEngine", "UsherRules",
                                                      "UsherBenchSupport"]),
        .testTarget(name: "UsherTranscriptsTests", dependencies: ["UsherTranscripts", "UsherEngine", "UsherRules"]),
        .testTarget(name: "UsherSystemTests", dependencies: ["usher", "UsherSQLite", "UsherStore", "UsherEngine", "UsherPostgres",
                                                     "UsherPostgresTestServer", "UsherBenchSupport", "UsherRuntime",
                                                     "UsherTestSupport"]),
        .testTarget(name: "UsherCLITests", dependencies: ["usher"], exclude: ["Snapshots", "Fixtures"]),
    ]
)
