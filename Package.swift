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
        // Snowball's stemmers, for keywords that match other forms of their words. Debian's
        // libstemmer-dev ships no pkg-config file: the module map links `stemmer` itself.
        .systemLibrary(name: "CStemmer", path: "Sources/CStemmer", providers: [.apt(["libstemmer-dev"])]),

        .target(name: "UsherDiagnostics", swiftSettings: strict),
        // The one JSON reader and writer (hand-written: several times faster than Foundation's
        // on the store's and the replay's hot paths) and FNV-1a; no dependencies.
        .target(name: "UsherJSON", swiftSettings: strict),
        .target(name: "UsherYAML", dependencies: ["CYAML", "UsherDiagnostics"], swiftSettings: strict),
        .target(name: "UsherText", dependencies: ["CPCRE2", "CUsherICU", "CStemmer"], swiftSettings: strict),
        .target(name: "UsherRules", dependencies: ["UsherYAML", "UsherText", "UsherDiagnostics", "UsherJSON"],
                swiftSettings: strict),
        // The mapping file of the SQL adapters; read with UsherYAML's NodeReader, like bot files.
        .target(name: "UsherSQLMapping", dependencies: ["UsherYAML", "UsherDiagnostics"],
                swiftSettings: strict),
        .target(name: "UsherEngine", dependencies: ["UsherRules", "UsherText", "UsherYAML", "UsherJSON"], swiftSettings: strict),
        .target(name: "UsherStore", dependencies: ["UsherEngine", "UsherJSON"], swiftSettings: strict),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "UsherSQLite", dependencies: ["UsherStore", "UsherEngine", "UsherJSON", "CSQLite"], swiftSettings: strict),
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        .target(name: "UsherPostgres",
                dependencies: ["UsherStore", "UsherEngine", "UsherJSON", "UsherSQLMapping", "UsherDiagnostics", "CLibPQ"], swiftSettings: strict),
        .target(name: "UsherStdio", dependencies: ["UsherStore", "UsherSQLite", "UsherEngine", "UsherJSON"], swiftSettings: strict),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .target(name: "UsherRuntime", dependencies: ["UsherStore", "UsherEngine", "UsherRules", "UsherDiagnostics", "UsherJSON", "CMicroHTTPD"],
                swiftSettings: strict),
        .target(name: "UsherTranscripts",
                dependencies: ["UsherEngine", "UsherRules", "UsherText", "UsherYAML", "UsherDiagnostics", "UsherJSON", "CZlib"],
                swiftSettings: strict),
        .executableTarget(name: "usher",
                          dependencies: ["UsherEngine", "UsherRules", "UsherDiagnostics", "UsherYAML", "UsherTranscripts",
                                         "UsherStore", "UsherRuntime", "UsherSQLite", "UsherStdio", "UsherSQLMapping",
                                         "UsherPostgres", "UsherFirestore", "UsherWebhook"],
                          swiftSettings: strict),
        // libFuzzer harnesses: built only with `swift build --sanitize=fuzzer --product …`.
        .executableTarget(name: "FuzzYAML", dependencies: ["UsherRules", "UsherYAML"],
                          swiftSettings: strict),
        .executableTarget(name: "FuzzText", dependencies: ["UsherText"], swiftSettings: strict),

        .testTarget(name: "UsherJSONTests", dependencies: ["UsherJSON"]),
        // Test support, not product: under Tests/Support, linked by tests and benchmarks only.
        // A throwaway PostgreSQL server (initdb in a temporary directory, a Unix socket): no
        // system service is touched.
        .target(name: "UsherPostgresTestServer", path: "Tests/Support/UsherPostgresTestServer", swiftSettings: strict),
        // What tests of several targets share: the bot the worker tests and benchmarks run, `cpuTime`,
        // `eventually`.
        .target(name: "UsherTestSupport", dependencies: ["UsherRuntime"], path: "Tests/Support/UsherTestSupport",
                swiftSettings: strict),
        // The conformance kit every adapter's tests run, and the in-memory store (the core alone).
        .target(name: "UsherStoreTestKit", dependencies: ["UsherStore", "UsherEngine"], path: "Tests/Support/UsherStoreTestKit",
                swiftSettings: strict),

        // Benchmarks, not product: under Benchmarks/ (`make bench`; BENCHMARKS.md). Targets of this
        // package rather than a package of their own: their ceilings run the adapters' own SQL text
        // (`StoreSQL`, `PGSQL`, `package` access), which a separate package could reach only if it
        // became public API; and `swift build` keeps them compiling with everything else.
        .target(name: "UsherBenchSupport", dependencies: ["UsherTestSupport", "UsherRuntime", "UsherStore", "UsherEngine"],
                path: "Benchmarks/UsherBenchSupport", swiftSettings: strict),
        .executableTarget(name: "usher-bench",
                          dependencies: ["UsherEngine", "UsherRules", "UsherText", "UsherTranscripts",
                                         "UsherStore", "UsherSQLite", "UsherRuntime", "UsherBenchSupport", "UsherTestSupport"],
                          path: "Benchmarks/usher-bench", swiftSettings: strict),
        .executableTarget(name: "usher-store-bench",
                          dependencies: ["UsherSQLite", "UsherStore", "UsherEngine", "CSQLite", "UsherRuntime",
                                         "UsherBenchSupport", "UsherTestSupport"],
                          path: "Benchmarks/usher-store-bench", swiftSettings: strict),
        .executableTarget(name: "usher-pg-bench",
                          dependencies: ["UsherPostgres", "UsherPostgresTestServer", "UsherRuntime", "UsherRules",
                                         "UsherStore", "UsherEngine", "UsherBenchSupport", "UsherTestSupport"],
                          path: "Benchmarks/usher-pg-bench", swiftSettings: strict),

        .testTarget(name: "UsherYAMLTests", dependencies: ["UsherYAML", "UsherTestSupport"]),
        .testTarget(name: "UsherTextTests", dependencies: ["UsherText", "UsherTestSupport"]),
        .testTarget(name: "UsherRulesTests", dependencies: ["UsherRules", "UsherYAML", "UsherTestSupport"]),
        .testTarget(name: "UsherSQLMappingTests", dependencies: ["UsherSQLMapping", "UsherDiagnostics"]),
        .testTarget(name: "UsherEngineTests", dependencies: ["UsherEngine", "UsherRules", "UsherTestSupport"]),
        .testTarget(name: "UsherStoreTests", dependencies: ["UsherStoreTestKit", "UsherStore", "UsherEngine", "UsherRules"]),
        .testTarget(name: "UsherSQLiteTests", dependencies: ["UsherStoreTestKit", "UsherSQLite", "UsherStore", "UsherEngine"]),
        .testTarget(name: "UsherPostgresTests",
                    dependencies: ["UsherStoreTestKit", "UsherPostgres", "UsherPostgresTestServer", "UsherStore", "UsherEngine",
                                   "UsherSQLMapping", "UsherDiagnostics", "UsherTestSupport"]),
        .testTarget(name: "UsherStdioTests", dependencies: ["UsherStoreTestKit", "UsherStdio", "UsherSQLite", "UsherStore", "UsherEngine"]),
        .testTarget(name: "UsherRuntimeTests", dependencies: ["UsherStoreTestKit", "UsherRuntime", "UsherSQLite", "UsherStore", "UsherEngine", "UsherRules",
                                                      "UsherTestSupport"]),
        .testTarget(name: "UsherTranscriptsTests", dependencies: ["UsherTranscripts", "UsherEngine", "UsherRules"]),
        .testTarget(name: "UsherSystemTests", dependencies: ["usher", "UsherSQLite", "UsherStore", "UsherEngine", "UsherPostgres",
                                                     "UsherPostgresTestServer", "UsherTestSupport", "UsherRuntime",
                                                     "UsherFirestore", "UsherFirestoreTestServer", "UsherWebhook",
                                                     "UsherHTTPTestServer", "UsherHTTP", "UsherChatwootStandIn"]),
        .testTarget(name: "UsherCLITests", dependencies: ["usher"], exclude: ["Snapshots", "Fixtures"]),

        // HTTP for the adapters and connectors that talk to services (Firestore, webhooks): one
        // client over libcurl, Google service-account tokens signed with libcrypto, and a loopback
        // HTTP server the tests of both answer requests with (test support, not product).
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .target(name: "UsherHTTP", dependencies: ["CCurl"], swiftSettings: strict),
        .target(name: "UsherGoogleAuth", dependencies: ["UsherHTTP", "COpenSSL", "UsherJSON"], swiftSettings: strict),
        .target(name: "UsherHTTPTestServer", path: "Tests/Support/UsherHTTPTestServer", swiftSettings: strict),
        // A stand-in for Chatwoot (not Chatwoot): its routes and payload shapes on loopback, its
        // agent-bot webhooks sent to the bot, faults on demand.
        .target(name: "UsherChatwootStandIn", dependencies: ["UsherRuntime", "UsherHTTP", "UsherWebhook"],
                path: "Tests/Support/UsherChatwootStandIn", swiftSettings: strict),
        .testTarget(name: "UsherHTTPTests", dependencies: ["UsherHTTP", "UsherHTTPTestServer", "UsherTestSupport"]),
        .testTarget(name: "UsherGoogleAuthTests",
                    dependencies: ["UsherGoogleAuth", "UsherHTTP", "UsherHTTPTestServer", "UsherJSON", "COpenSSL"]),

        // Firestore, the seed's own backend: an adapter over the REST API v1; Google's emulator
        // (a JVM on a loopback port) for its tests.
        .target(name: "UsherFirestore",
                dependencies: ["UsherStore", "UsherEngine", "UsherJSON", "UsherHTTP", "UsherGoogleAuth", "UsherYAML", "UsherDiagnostics"],
                swiftSettings: strict),
        .target(name: "UsherFirestoreTestServer", dependencies: ["UsherHTTP"], path: "Tests/Support/UsherFirestoreTestServer",
                swiftSettings: strict),
        .executableTarget(name: "usher-firestore-bench",
                          dependencies: ["UsherFirestore", "UsherFirestoreTestServer", "UsherHTTP", "UsherJSON", "UsherRuntime",
                                         "UsherStore", "UsherBenchSupport", "UsherTestSupport"],
                          path: "Benchmarks/usher-firestore-bench", swiftSettings: strict),
        // The webhook front door: messages in over HTTP (the runtime's server), acknowledged once
        // committed to an embedded SQLite state file; actions out through an outbox, signed
        // (libcrypto's HMAC) and retried by the one HTTP client.
        .target(name: "UsherWebhook",
                dependencies: ["UsherStore", "UsherEngine", "UsherSQLite", "UsherStdio", "UsherRuntime", "UsherHTTP", "UsherJSON",
                               "UsherYAML", "COpenSSL"],
                swiftSettings: strict),
        .executableTarget(name: "usher-webhook-bench",
                          dependencies: ["UsherWebhook", "UsherSQLite", "UsherStore", "UsherRuntime", "UsherHTTP", "UsherHTTPTestServer",
                                         "UsherBenchSupport", "UsherTestSupport"],
                          path: "Benchmarks/usher-webhook-bench", swiftSettings: strict),
        .testTarget(name: "UsherWebhookTests",
                    dependencies: ["UsherWebhook", "UsherSQLite", "UsherStore", "UsherEngine", "UsherRuntime", "UsherHTTP",
                                   "UsherHTTPTestServer", "UsherTestSupport", "UsherStoreTestKit", "UsherJSON", "UsherChatwootStandIn",
                                   "UsherStdio"]),
        .testTarget(name: "UsherFirestoreTests",
                    dependencies: ["UsherFirestore", "UsherFirestoreTestServer", "UsherStoreTestKit", "UsherStore", "UsherEngine",
                                   "UsherTestSupport", "UsherRuntime", "UsherRules"]),
    ]
)
