import Dispatch
import Foundation
import UsherRuntime
import UsherStore
import UsherYAML
#if canImport(Glibc)
import Glibc
#endif

/// `usher run BOT…`: the worker.
enum RunCommand: Command {
    static let name = "run"
    static let summary = "run the worker: answer new messages in a store, hand off to agents"
    static let help = """
    Usage: usher run BOT… [--store URL] [--metrics ADDR] [options]

    Catches up on every message the bots have not decided yet, then follows new ones: decides
    each with the bot's rules and writes replies, system notices, handoffs and agent
    notifications back to the store. Conversations run in parallel, each in order; a crash at
    any point loses and duplicates nothing (the next run picks up where the store says).

    Several bots in one process share a store by channel: a bot whose bot.yaml lists
    `channels: [web, app-*]` answers those conversations; the bot without `channels` answers
    every other conversation.

    Signals: SIGTERM or SIGINT stop taking work, finish what is in flight and exit 0 within
    --shutdown-timeout; SIGHUP reloads every bot's rules (a change to any loaded file reloads it
    too, within a second). A reload validates the whole bot aside and keeps the running rules
    when the new ones are broken (the log names file:line; usher_rules_last_reload_successful
    reads 0).

    Options:
    \(Stores.help(column: 23))
      --metrics ADDR         serve /metrics, /healthz and /readyz on ADDR (127.0.0.1:9464);
                             /healthz and /readyz say 503 and why while the store fails
      --log-format FORMAT    logfmt (default) or json; one line per event, on stderr
      --log-level LEVEL      debug, info (default), warning or error
      --log-text             include message and reply text in logs (off: privacy)
      --lanes N              conversations decided at the same time (default 8)
      --worker-id ID         this worker's name in leases (default worker-PID)
      --shutdown-timeout D   how long in-flight work may take on SIGTERM (default 10s)
      --notify-window D      agent notifications of one queue within D are merged (default 10s)
      --mute-queue QUEUE     do not deliver agent notifications of QUEUE (repeatable); handoffs
                             still happen and show in `usher inbox`
      --from WHEN            on a store over an application's existing data, where a bot that
                             has no position yet starts: now (default: nothing old is answered),
                             beginning, or a time (2026-12-01, 2026-12-01T09:00:00+08:00)
      -h, --help             show this help

    Store errors: a transient one (a lock, a full disk, a file made read-only, a lost
    connection) is retried with backoff while /healthz and /readyz answer 503 with the error;
    any other (a constraint, a type error, the database file deleted) stops the worker at once
    (docs/operations.md).

    Exit status: 0 after a clean shutdown, 1 a bot does not load or the store failed in a way
    retrying cannot mend (a supervisor may start it again: nothing is lost), 64 usage.

    """

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: Stores.optionNames.union(["--store", "--metrics", "--log-format", "--log-level", "--lanes",
                                                                       "--worker-id", "--shutdown-timeout", "--notify-window", "--mute-queue",
                                                                       "--from"]),
                                flags: ["--log-text"])
        guard !a.positionals.isEmpty else { throw UsageError("name at least one BOT (a folder with bot.yaml), like bots/support") }
        let format = try Logger.Format(rawValue: a.choice("--log-format", Logger.Format.allCases.map(\.rawValue), default: "logfmt"))!
        let levels = ["debug": Logger.Level.debug, "info": .info, "warning": .warning, "error": .error]
        let level = levels[try a.choice("--log-level", ["debug", "info", "warning", "error"], default: "info")]!
        let log = Logger(format: format, minimum: a.flag("--log-text") ? min(level, .debug) : level)
        var options = Worker.Options()
        options.logText = a.flag("--log-text")
        if let lanes = try a.int("--lanes") {
            guard lanes >= 1 else { throw UsageError("--lanes must be at least 1") }
            options.lanes = lanes
        }
        if let w = a.value("--notify-window") {
            guard let d = DurationText.parse(w) else { throw UsageError("--notify-window needs a duration like 10s") }
            options.notificationWindow = d
        }
        options.mutedQueues = Set(a.all("--mute-queue"))
        var shutdownTimeout = 10.0
        if let t = a.value("--shutdown-timeout") {
            guard let d = DurationText.parse(t) else { throw UsageError("--shutdown-timeout needs a duration like 10s") }
            shutdownTimeout = d
        }
        options.shutdownTimeout = .milliseconds(Int(shutdownTimeout * 1000))
        // A change to any loaded file reloads it within a second; stdin (stdio) is taken in
        // beside the loops, and the worker stops once it ended and all of it is decided.
        options.watchInterval = .seconds(1)
        options.takeIn = true

        var bots: [BotRuntime] = []
        for path in a.positionals {
            do { bots.append(try BotRuntime(path: path, log: log)) } catch {
                Terminal.err("usher run: \(error.message)")
                return .failure
            }
        }
        let ids = bots.map(\.id)
        if Set(ids).count != ids.count { throw UsageError("the same bot is named twice: \(ids.joined(separator: ", "))") }
        let url = a.value("--store") ?? Stores.default
        let start = try a.value("--from").map { w throws(UsageError) in
            guard let s = StartPosition(w) else { throw UsageError("--from needs now, beginning or a time like 2026-12-01T09:00:00Z, not '\(w)'") }
            return s
        }
        guard let store = try Self.open(url, a, start: start, log: log) else { return .ok }
        let worker = Worker(store: store, bots: bots, workerID: a.value("--worker-id") ?? "worker-\(getpid())",
                            options: options, log: log)
        // A store with a listener of its own (the webhook) serves the worker's health there.
        (store as? any ServingStore)?.serve(worker)
        var server: HTTPServer?
        if let address = a.value("--metrics") {
            do {
                server = try HTTPServer(address: address, log: log) { worker.httpResponse(path: $0) }
                log.info("metrics-listening", ["address": server!.address])
            } catch {
                Terminal.err("usher run: \(error.message)\n")
                _ = blocking(closing: store) { .failure }
                return .failure
            }
        }
        log.info("store-open", ["store": StoreURL.redacted(url)])

        // Signals become events here, and only here.
        let signals = DispatchQueue(label: "usher.signals")
        let deadline = shutdownTimeout
        SignalThread.start { sig in
            signals.async {
                if sig == SIGHUP {
                    log.info("signal", ["signal": "HUP"])
                    worker.reload(force: true)
                } else {
                    log.info("signal", ["signal": sig == SIGTERM ? "TERM" : "INT", "deadline": "\(deadline)s"])
                    worker.requestStop()
                    // The worker cancels what is in flight at the deadline; this is the backstop
                    // for a store call that does not answer cancellation (a blocked socket).
                    signals.asyncAfter(deadline: .now() + deadline + 5) {
                        log.warning("shutdown-deadline", ["note": "exiting with work in flight; it will be decided again"])
                        exit(0)
                    }
                }
            }
        }
        let ran = awaiting { try await worker.run() }
        _ = awaiting { try? await store.close() }
        server?.close()
        switch ran {
        case .success:
            break
        case .failure(is ShutdownDeadline):
            log.warning("shutdown-deadline", ["note": "work in flight was cancelled; it will be decided again"])
        case .failure(let error):
            log.error("worker-failed", ["error": "\(error)"])
            return .failure
        }
        return .ok
    }
}

extension RunCommand {
    /// Opens the store. A server that is not up yet (the worker and the database started
    /// together: `StoreError.isUnavailable`) is waited for, the open tried again every 0.5–5 s;
    /// nil when SIGTERM or SIGINT came meanwhile. A wrong password, a database or role that does
    /// not exist, a mapping that does not match: thrown at once.
    static func open(_ url: String, _ a: Arguments, start: StartPosition? = nil, log: Logger) throws(UsageError) -> (any ChatStore)? {
        var delay = 0.5
        while true {
            do {
                return try Stores.open(url, a, worker: true, start: start) { log.log(.warning, $0, pairs: $1) }
            } catch where error.serverNotUp {
                log.warning("store-unreachable", ["store": StoreURL.redacted(url), "error": error.message, "retry_in": "\(delay)s"])
                if let sig = SignalThread.wait(seconds: delay) {
                    log.info("signal", ["signal": sig == SIGTERM ? "TERM" : "INT", "note": "stopped before the store opened"])
                    return nil
                }
                delay = min(delay * 2, 5)
            }
        }
    }
}

/// SIGTERM, SIGINT and SIGHUP for the worker: blocked in every thread from the start of the
/// process (`block()`, called before any thread exists), then taken one by one with `sigwait`
/// by a thread of their own — so a signal that arrives early waits instead of being lost.
enum SignalThread {
    static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    private static func set() -> sigset_t {
        var s = sigset_t()
        sigemptyset(&s)
        for sig in handled { sigaddset(&s, sig) }
        return s
    }

    static func block() {
        var s = set()
        pthread_sigmask(SIG_BLOCK, &s, nil)
    }

    /// Waits up to `seconds` for SIGTERM or SIGINT (before `start`; SIGHUP is let pass): the
    /// signal, or nil.
    static func wait(seconds: Double) -> Int32? {
        block()
        var s = set()
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            let left = deadline - ContinuousClock.now
            var timeout = timespec(tv_sec: Int(left.components.seconds), tv_nsec: Int(left.components.attoseconds / 1_000_000_000))
            let sig = sigtimedwait(&s, nil, &timeout)
            if sig == SIGTERM || sig == SIGINT { return sig }
        }
        return nil
    }

    static func start(_ handle: @escaping @Sendable (Int32) -> Void) {
        block()   // in case `block()` was not called at start (tests call `run` in-process)
        let thread = Thread {
            var s = set()
            while true {
                var sig: Int32 = 0
                if sigwait(&s, &sig) == 0 { handle(sig) }
            }
        }
        thread.name = "usher-signals"
        thread.start()
    }
}
