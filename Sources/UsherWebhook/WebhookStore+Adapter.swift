public import Foundation
public import UsherStore
import UsherSQLite
import UsherYAML

extension WebhookStore {
    /// The environment variable holding the shared secret of the signatures.
    public static let secretVariable = "USHER_WEBHOOK_SECRET"

    /// `webhook:CALLBACK_URL` for the `usher` command's registry.
    public static let adapter = StoreAdapter(
        schemes: ["webhook"], form: "webhook:CALLBACK_URL",
        help: """
        webhook:CALLBACK_URL — messages in over HTTP (POST /v1/messages on
        --listen, signed with USHER_WEBHOOK_SECRET), actions POSTed to
        CALLBACK_URL, state in --state FILE (default usher-state.db;
        docs/webhook.md)
        """,
        options: listenerOptions
    ) { request in try await open(request) }

    /// The options of every store on the webhook's listener and outbox (`webhook:`, `chatwoot+…`).
    static let listenerOptions: [StoreAdapter.Option] = [
        .init("--listen", "ADDR", help: "webhook, chatwoot: where usher run takes messages in (127.0.0.1:8080)"),
        .init("--state", "FILE", help: "webhook, chatwoot: the state file (default usher-state.db)"),
        .init("--signatures", "on|off", help: "webhook, chatwoot: off takes requests unsigned (and the webhook sends its\ncalls unsigned); for trials only, and logged"),
        .init("--attempts", "N", help: "webhook, chatwoot: attempts per call before it is a dead letter (default 12)"),
        .init("--max-backoff", "D", help: "webhook, chatwoot: the longest wait between attempts of a call (default 1m)"),
    ]

    /// Opens the store a request names: the state file always; the listener and the delivery
    /// when `usher run` opens it (`request.worker`).
    public static func open(_ request: StoreRequest, environment: [String: String] = ProcessInfo.processInfo.environment)
        async throws -> WebhookStore {
        let callback = try callbackURL(request.url)
        let secretHint = "set \(secretVariable) to the secret shared with the backend (requests are signed with it both ways)"
        return try await open(request, callbackURL: callback, intakeSecret: (secretVariable, secretHint), environment: environment) {
            signatures, secret in
            let missing = signatures && secret == nil
                ? "set \(secretVariable) to sign the calls sent again (or pass --signatures off if the receiver takes them unsigned)"
                : nil
            return (MessagesAPI(signer: signatures ? secret.map { WebhookSigner(secret: $0) } : nil), missing)
        }
    }

    /// Opens a store on the webhook's listener and outbox for any front door: reads the options
    /// they share (`listenerOptions`) and the intake's secret from `intakeSecret.variable` (`usher
    /// run` refuses to start without it unless `--signatures off`), and makes the door with
    /// `door(signatures on, the secret)`, which also says why calls cannot be made, if they
    /// cannot (a missing token: `Options.callsUnauthorized`).
    static func open(_ request: StoreRequest, callbackURL callback: String, intakeSecret: (variable: String, hint: String),
                     environment: [String: String],
                     door: (_ signatures: Bool, _ secret: [UInt8]?) throws -> (any FrontDoor, callsUnauthorized: String?))
        async throws -> WebhookStore {
        var options = Options(callbackURL: callback)
        let o = request.options
        if let n = o["--attempts"] {
            guard let attempts = Int(n), attempts >= 1 else {
                throw StoreError("bad-option", "--attempts is '\(n)'; expected a whole number of at least 1")
            }
            options.deliveryAttempts = attempts
        }
        if let d = o["--max-backoff"] {
            guard let seconds = DurationText.parse(d), seconds > 0 else {
                throw StoreError("bad-option", "--max-backoff is '\(d)'; expected a duration like 30s or 5m")
            }
            options.longestBackoff = .milliseconds(Int(seconds * 1000))
            options.firstBackoff = min(options.firstBackoff, options.longestBackoff)
        }
        let signatures = o["--signatures"] ?? "on"
        guard signatures == "on" || signatures == "off" else {
            throw StoreError("bad-option", "--signatures is '\(signatures)'; expected on or off")
        }
        let secret = environment[intakeSecret.variable].flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        if request.worker {
            guard let listen = o["--listen"] else {
                throw StoreError("no-listen", "this store takes messages in over HTTP: give usher run --listen ADDR "
                                 + "(like 127.0.0.1:8080)")
            }
            options.listen = listen
            if signatures == "on", secret == nil {
                throw StoreError("no-secret", intakeSecret.hint + ", or pass --signatures off to run unsigned (not for production)")
            }
        }
        let (door, callsUnauthorized) = try door(signatures == "on", secret)
        options.callsUnauthorized = callsUnauthorized
        let path = o["--state"] ?? defaultStatePath
        if request.mustExist, !FileManager.default.fileExists(atPath: path) {
            throw StoreError("no-store", "no state file at \(path): usher run --store \(request.url.prefix { $0 != ":" }):… creates it; "
                             + "check --state")
        }
        let store = try await WebhookStore(database: try await SQLiteStore(path: path), door: door, options: options, warn: request.warn)
        if request.worker, signatures == "off" {
            store.events.warning("webhook-unsigned", [("note", "--signatures off: requests are taken in without signatures "
                                                                 + "(and the webhook's calls sent unsigned); anyone who can reach \(options.listen ?? "") can post, "
                                                                 + "and read any conversation's state (GET /v1/conversations/ID)")])
        }
        return store
    }

    /// The callback URL of `webhook:CALLBACK_URL`.
    static func callbackURL(_ url: String) throws -> String {
        let callback = String(url.dropFirst("webhook:".count))
        guard let c = URLComponents(string: callback), let scheme = c.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = c.host, !host.isEmpty else {
            throw StoreError("bad-url", "'\(url)' does not name a callback: expected webhook:http://HOST[:PORT]/PATH "
                             + "(or https://), where Usher POSTs its actions")
        }
        return callback
    }
}
