/// One `usher` subcommand: its help text and what it does.
protocol Command {
    static var name: String { get }
    /// One line for `usher --help`.
    static var summary: String { get }
    /// The full `usher CMD --help` text.
    static var help: String { get }
    static func run(_ args: [String]) throws(UsageError) -> ExitCode
}

enum CLI {
    static let version = "0.1.0"
    static var commands: [any Command.Type] { [NewCommand.self, CheckCommand.self, TestCommand.self, ExplainCommand.self, ReplayCommand.self,
                                                RunCommand.self, SendCommand.self, ChatCommand.self, InboxCommand.self, DeadlettersCommand.self,
                                                SchemaCommand.self] }

    static var help: String {
        var s = """
        usher — a rule-driven auto-reply worker for customer-support chat

        Usage: usher COMMAND [OPTIONS]

        Commands:

        """
        let width = commands.map { $0.name.count }.max()! + 2
        for c in commands { s += "  " + c.name.padding(width) + c.summary + "\n" }
        s += """

        Run 'usher COMMAND --help' for a command's options.
        Exit codes: 0 ok, 1 problems found, 64 usage error, 65 unreadable input data,
        69 the store is unavailable (its server is not up).

        """
        return s
    }

    static func main(_ argv: [String]) -> ExitCode {
        guard let first = argv.first else {
            Terminal.err(help)
            return .usage
        }
        switch first {
        case "--help", "-h", "help":
            if first == "help", argv.count > 1, let c = commands.first(where: { $0.name == argv[1] }) {
                Terminal.out(c.help)
            } else {
                Terminal.out(help)
            }
            return .ok
        case "--version":
            Terminal.out("usher \(version)\n")
            return .ok
        default:
            break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            let hint = Suggestion.closest(to: first, in: commands.map { $0.name }).map { "; did you mean '\($0)'?" } ?? ""
            Terminal.err("usher: unknown command '\(first)'\(hint)\n\n" + help)
            return .usage
        }
        let rest = Array(argv.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            Terminal.out(command.help)
            return .ok
        }
        do {
            return try command.run(rest)
        } catch where error.isFailure {
            Terminal.err("usher \(command.name): \(error.message)\n")
            return error.status
        } catch {
            // One line: the whole help would push the mistake off the screen.
            Terminal.err("usher \(command.name): \(error.message) (see usher \(command.name) --help)\n")
            return .usage
        }
    }
}

extension String {
    func padding(_ width: Int) -> String {
        let n = count
        return n >= width ? self + " " : self + String(repeating: " ", count: width - n)
    }
}

import UsherDiagnostics
