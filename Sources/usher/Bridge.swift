import Dispatch
import UsherStore

// The `usher` commands are synchronous (a command line in, an exit status out); the stores and
// the worker are async. These two functions are the one bridge between them.

/// Runs `body` to its end on the concurrency pool while this thread waits for it.
func awaiting<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let done = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task.detached {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return box.result!
}

/// Runs async work from a synchronous command; store failures become exit status 1. `closing`:
/// a store closed once the work is done, failed or not, before the command returns — its
/// threads (PostgreSQL's LISTEN and reading threads, inside libpq and OpenSSL) must be gone
/// before the process exits, or `exit`'s clean-up of OpenSSL races them (a crash after the
/// work was done, and a non-zero status that would make a script send again).
func blocking(closing store: (any ChatStore)? = nil, _ body: @escaping @Sendable () async throws -> ExitCode) -> ExitCode {
    let result = awaiting { try await body() }
    if let store { _ = awaiting { try? await store.close() } }
    switch result {
    case .success(let code): return code
    case .failure(let error):
        Terminal.err("usher: \(error)\n")
        return .failure
    }
}

private final class ResultBox<T>: @unchecked Sendable {
    // @unchecked: written by one task before it signals the semaphore the reader waits on.
    var result: Result<T, any Error>?
}
