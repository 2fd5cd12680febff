public import Foundation
public import UsherStore

extension ChatwootAgentBot {
    /// The agent bot's access token (Chatwoot: Settings → Bots, or the API's `access_token`).
    public static let tokenVariable = "CHATWOOT_API_TOKEN"
    /// The agent bot's secret, which Chatwoot signs its webhooks with.
    public static let secretVariable = "CHATWOOT_WEBHOOK_SECRET"

    /// `chatwoot+http://HOST:PORT` and `chatwoot+https://…` for the `usher` command's registry: the
    /// webhook store with Chatwoot's agent-bot protocol as its front door.
    public static let adapter = StoreAdapter(
        schemes: ["chatwoot+http", "chatwoot+https"], form: "chatwoot+http[s]://HOST[:PORT]",
        help: """
        chatwoot+http[s]://HOST[:PORT] — a Chatwoot agent bot: its webhooks in
        (POST /chatwoot/webhook on --listen, signed with CHATWOOT_WEBHOOK_SECRET),
        replies, handoffs and labels through Chatwoot's API with the bot's token
        (CHATWOOT_API_TOKEN), state in --state FILE (docs/chatwoot.md)
        """,
        options: WebhookStore.listenerOptions + [
            .init("--teams", "Q=ID,…", help: "chatwoot: the team a handoff to queue Q is assigned to (general=3;\n1/general=3 for account 1 only)"),
        ]
    ) { request in try await open(request) }

    /// Opens the store a request names (`WebhookStore.open` with this front door): the state file
    /// always; the listener and the delivery when `usher run` opens it, which needs the token.
    public static func open(_ request: StoreRequest, environment: [String: String] = ProcessInfo.processInfo.environment)
        async throws -> WebhookStore {
        let base = try baseURL(request.url)
        let teams = try request.options["--teams"].map { text throws(StoreError) in try Teams(parsing: text) } ?? Teams()
        let token = environment[tokenVariable].flatMap { $0.isEmpty ? nil : $0 }
        let missing = "set \(tokenVariable) to the agent bot's access token: Usher calls Chatwoot's API with it"
        if request.worker, token == nil { throw StoreError("no-token", missing) }
        let hint = "set \(secretVariable) to the agent bot's secret (Chatwoot signs the bot's webhooks with it; docs/chatwoot.md)"
        return try await WebhookStore.open(request, callbackURL: base, intakeSecret: (secretVariable, hint), environment: environment) {
            signatures, secret in
            (ChatwootAgentBot(signer: signatures ? secret.map { WebhookSigner.chatwoot(secret: $0) } : nil, token: token, teams: teams),
             token == nil ? missing : nil)
        }
    }

    /// Chatwoot's base URL of `chatwoot+http://HOST[:PORT][/PATH]` (`http://HOST:PORT/PATH`).
    static func baseURL(_ url: String) throws -> String {
        let base = String(url.dropFirst("chatwoot+".count))
        guard let c = URLComponents(string: base), let scheme = c.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = c.host, !host.isEmpty, c.query == nil else {
            throw StoreError("bad-url", "'\(url)' does not name a Chatwoot: expected chatwoot+http://HOST[:PORT] (or chatwoot+https://), "
                             + "the address of its web app and API")
        }
        return base.hasSuffix("/") ? String(base.dropLast()) : base
    }
}
