public import UsherStore
import Foundation
import UsherDiagnostics
import UsherGoogleAuth
import UsherHTTP

extension FirestoreStore {
    /// `firestore://PROJECT` for the `usher` command's registry, with `--mapping FILE`.
    public static let adapter = StoreAdapter(
        schemes: ["firestore"], form: "firestore://PROJECT",
        help: """
        firestore://PROJECT[?database=NAME] — Firestore over its REST API: the
        emulator at FIRESTORE_EMULATOR_HOST when set, else Google with the service
        account key in GOOGLE_APPLICATION_CREDENTIALS; the seed app's documents
        by default (docs/store-firestore.md)
        """,
        options: [StoreAdapter.Option("--mapping", "FILE", help: """
            with firestore: a mapping file (firestore: 1) naming the app's collections,
            fields and values; default: the seed's conversations/messages
            """)],
        readsHistory: true
    ) { request in
        try await open(request, environment: ProcessInfo.processInfo.environment)
    }

    /// Opens `request.url` with the emulator or credentials `environment` names.
    public static func open(_ request: StoreRequest, environment: [String: String], options: Options = Options()) async throws -> FirestoreStore {
        let (project, database) = try parse(request.url)
        var layout = FirestoreLayout.seed
        if let path = request.options["--mapping"] {
            let (loaded, diagnostics) = FirestoreLayout.load(path: path)
            guard let loaded, !diagnostics.hasErrors else {
                throw StoreError("mapping", "the mapping file has errors (usher check \(path) shows them with the source line):\n"
                                 + diagnostics.filter { $0.severity == .error }.map(\.headline).joined(separator: "\n"))
            }
            layout = loaded
        }
        let http = HTTPClient(connections: 8, connectTimeout: .seconds(5), timeout: .seconds(30))
        let rest: FirestoreREST
        if let host = environment["FIRESTORE_EMULATOR_HOST"], !host.isEmpty {
            rest = FirestoreREST(base: "http://\(host)/v1/", project: project, database: database, http: http, auth: .emulator)
        } else if let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty {
            let key: ServiceAccountKey
            do { key = try ServiceAccountKey.load(path: path) } catch {
                throw StoreError("credentials", "\(error)")
            }
            let tokens = AccessTokenSource(key: key, scope: "https://www.googleapis.com/auth/datastore", client: http)
            rest = FirestoreREST(base: "https://firestore.googleapis.com/v1/", project: project, database: database, http: http,
                                 auth: .serviceAccount(tokens))
        } else {
            throw StoreError("credentials", "firestore needs FIRESTORE_EMULATOR_HOST=HOST:PORT (the emulator) or "
                             + "GOOGLE_APPLICATION_CREDENTIALS=KEY.json (a service account key) in the environment")
        }
        let worker = "\(ProcessInfo.processInfo.hostName)-\(getpid())-\(UInt32.random(in: 0...UInt32.max) % 100_000)"
        var options = options
        options.leases = options.leases && request.worker
        // A worker's bot with no position starts where --from says, now by default: Usher
        // introduced to an app with history answers nothing old (docs/store-firestore.md).
        if request.worker { options.start = request.start ?? options.start ?? .now }
        let store = FirestoreStore(rest: rest, layout: layout, worker: worker, options: options)
        // One read now: a server that is not there is said at once (`usher run` waits for it).
        _ = try await store.call { try await rest.batchGet([rest.name(store.botPath("_"))]) }
        return store
    }

    /// `firestore://PROJECT[?database=NAME]` → (project, database).
    static func parse(_ url: String) throws -> (String, String) {
        guard url.hasPrefix("firestore://") else {
            throw StoreError("bad-url", "a Firestore store is written firestore://PROJECT, like firestore://my-app")
        }
        let rest = url.dropFirst("firestore://".count)
        let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let project = String(parts[0])
        guard !project.isEmpty, project.utf8.allSatisfy({ c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || c == UInt8(ascii: "-") || (c >= 0x41 && c <= 0x5a)
        }) else {
            throw StoreError("bad-url", "'\(project)' is not a Firestore project id; write firestore://PROJECT, like firestore://my-app")
        }
        var database = "(default)"
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard kv.count == 2, kv[0] == "database", !kv[1].isEmpty else {
                    throw StoreError("bad-url", "unknown parameter '\(pair)' in the Firestore URL; the one parameter is database=NAME")
                }
                database = kv[1]
            }
        }
        return (project, database)
    }
}
