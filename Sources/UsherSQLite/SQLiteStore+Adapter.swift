public import UsherStore
import Foundation

extension SQLiteStore {
    /// `sqlite:PATH` for the `usher` command's registry.
    public static let adapter = StoreAdapter(
        schemes: ["sqlite"], form: "sqlite:PATH",
        help: """
        sqlite:PATH — the embedded default (sqlite:usher.db): a file any number of
        workers on this machine share; options ?synchronous=normal|full,
        busy_timeout_ms=N, checkpoint_pages=N (docs/store-sqlite.md)
        """
    ) { request in
        let (path, options) = try parse(url: request.url)
        if request.mustExist, path != ":memory:", !FileManager.default.fileExists(atPath: path) {
            throw StoreError("no-store", "no store at \(path): nothing has been written there yet; check the path "
                             + "(usher run and usher send create it)")
        }
        return try await SQLiteStore(path: path, options: options)
    }
}
