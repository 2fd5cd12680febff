import Foundation
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

    /// The database file was deleted, or another file put in its place, while the store had it
    /// open. Not transient: the worker's positions are the old file's; a new start reads the new one.
    static let fileReplacedCode = "sqlite-file-replaced"

    static func fileReplaced(_ path: String) -> StoreError {
        let now = FileManager.default.fileExists(atPath: path) ? "another file is there now" : "nothing is there now"
        return StoreError(fileReplacedCode,
                          "the database file '\(path)' was deleted or replaced while it was open (\(now)); what was written "
                          + "since went to the old file; start usher again to use the file at that path")
    }
}
