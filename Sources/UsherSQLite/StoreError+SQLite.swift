import UsherStore

extension StoreError {
    /// The database was written by a newer build.
    static func schemaTooNew(path: String, found: Int, supported: Int) -> StoreError {
        StoreError("schema-too-new",
                   "the database '\(path)' has schema version \(found), but this build of usher knows versions up to "
                   + "\(supported); upgrade usher, or point it at another database")
    }

    /// Calls after `close()`.
    static func closed(_ path: String) -> StoreError {
        StoreError("closed", "the SQLite store '\(path)' is closed")
    }
}
