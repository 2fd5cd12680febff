internal import CSQLite
import Foundation
import Testing
import UsherStore
@testable import UsherSQLite

/// What the store makes of a database file that changes under it, and of SQLite's errors: which
/// can be waited out (transient) and which cannot.
@Suite("SQLite store: file faults")
struct FileFaultTests {
    /// Calls `body` until it throws, for up to 30 s (the file check runs at most every 250 ms);
    /// returns what it threw.
    func firstError(_ body: () async throws -> Void) async -> (any Error)? {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            do { try await body() } catch { return error }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
    }

    @Test func aDeletedDatabaseFileIsNoticedAndNotWaitedOut() async throws {
        let dir = TempDir()
        let path = dir.path()
        let store = try await SQLiteStore(path: path)
        defer { Task { try? await store.close() } }
        try await store.append(Fixture.customer("c", "before"))
        remove(path)
        // An idle worker notices it in its waits…
        let waiting = await firstError { try await store.waitForChanges(after: 1, timeout: .milliseconds(10)) }
        let e = try #require(waiting as? StoreError)
        #expect(e.code == "sqlite-file-replaced" && !e.isTransient, "\(e)")
        #expect(e.message.contains(path) && e.message.contains("nothing is there now"), "\(e.message)")
        // …and nothing more is written to the file nobody else sees.
        await #expect(throws: StoreError.self) { try await store.append(Fixture.customer("c", "after")) }
        #expect(!FileManager.default.fileExists(atPath: path), "the store did not create a new file in its place")
    }

    @Test func anotherFileMovedInPlaceIsNoticed() async throws {
        let dir = TempDir()
        let path = dir.path(), other = dir.path("other.db")
        let store = try await SQLiteStore(path: path)
        defer { Task { try? await store.close() } }
        try await store.append(Fixture.customer("c", "before"))
        let restored = try await SQLiteStore(path: other)
        try await restored.append(Fixture.customer("d", "in the other file"))
        try await restored.close()
        #expect(rename(other, path) == 0)
        let thrown = await firstError { try await store.append(Fixture.customer("c", "after")) }
        let e = try #require(thrown as? StoreError)
        #expect(e.code == "sqlite-file-replaced" && e.message.contains("another file is there now"), "\(e)")
    }

    /// What a running worker can wait out (a lock, a full disk, a file made read-only: the
    /// machine's owner mends them) is transient; what is wrong with the data or the schema is not.
    @Test(arguments: [
        (SQLITE_BUSY, "busy", true),
        (SQLITE_LOCKED, "busy", true),
        (SQLITE_FULL, "sqlite-full", true),
        (SQLITE_IOERR | (4 << 8), "sqlite-io", true),          // SQLITE_IOERR_FSYNC
        (SQLITE_READONLY, "sqlite-readonly", true),
        (SQLITE_READONLY | (1 << 8), "sqlite-readonly", true), // SQLITE_READONLY_RECOVERY
        (SQLITE_CANTOPEN, "sqlite-readonly", true),
        (SQLITE_READONLY | (4 << 8), "sqlite", false),         // SQLITE_READONLY_DBMOVED: a rollback journal's moved file
        (SQLITE_CORRUPT, "sqlite-corrupt", false),
        (SQLITE_NOTADB, "sqlite-corrupt", false),
        (SQLITE_CONSTRAINT, "sqlite-constraint", false),
        (SQLITE_ERROR, "sqlite", false),
        (SQLITE_MISMATCH, "sqlite", false),
    ])
    func errorClasses(rc: Int32, code: String, transient: Bool) {
        let e = SQLiteConnection.error(rc, message: "m", doing: "x")
        #expect(e.code == code && e.isTransient == transient, "\(rc): \(e)")
    }
}
