import Foundation
import UsherDiagnostics
import UsherRules

/// `usher new BOT`: a starter bot folder that checks clean and whose tests pass, its comments
/// a first lesson in the rule language.
enum NewCommand: Command {
    static let name = "new"
    static let summary = "create a starter bot folder: bot.yaml, rules, tests and transcripts"
    static let help = """
    Usage: usher new BOT [--name NAME] [--timezone ZONE]

    Creates the folder BOT (bots/airline, say) with a bot that works from the first minute and
    whose comments explain each part, to change into your own:

      BOT/bot.yaml               the bot: its id (the folder's name), time zone, opening hours,
                                 limits and handoff defaults
      BOT/rules.yaml             seven rules: a person asked for, an order number, opening hours
                                 (open, closed), thanks, three first replies, then a handoff
      BOT/tests/basics.yaml      rule tests for each of them (usher test BOT)
      BOT/transcripts/           an example conversation to replay (usher replay), and where
                                 recorded ones go

    The YAML files start with the editor modeline of their JSON Schema: the repository's
    schema/ folder when it is under the current folder, else a copy in BOT/schema/. The new
    bot passes `usher check --strict BOT` and `usher test BOT`.

    Options:
      --name NAME       the bot's display name (default: the id, capitalised)
      --timezone ZONE   an IANA time zone like Europe/Madrid (default: this machine's, or UTC)
      -h, --help        show this help

    Exit status: 0 created, 1 BOT exists and is not empty or cannot be written, 64 usage error.

    """

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: ["--name", "--timezone"], flags: [])
        guard a.positionals.count == 1 else { throw UsageError("needs exactly one BOT folder, like bots/airline") }
        let folder = a.positionals[0].count > 1 && a.positionals[0].hasSuffix("/") ? String(a.positionals[0].dropLast()) : a.positionals[0]
        let id = (folder as NSString).lastPathComponent
        guard BotConfig.isValidID(id) else {
            throw UsageError("'\(id)' cannot be a bot id; name the folder with lowercase letters, digits and '-', like bots/airline")
        }
        let zone = try timeZone(a.value("--timezone"))
        let name = a.value("--name") ?? id.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")

        let fm = FileManager.default
        if let existing = try? fm.contentsOfDirectory(atPath: folder), !existing.isEmpty {
            throw .failure("\(folder) already exists and is not empty; choose a new folder, or remove it first")
        }
        if fm.fileExists(atPath: folder), (try? fm.contentsOfDirectory(atPath: folder)) == nil {
            throw .failure("\(folder) exists and is not a folder")
        }
        do {
            let schema = try schemaFolder(for: folder)
            let starter = StarterBot(id: id, name: name, timeZone: zone, schema: schema)
            for (path, text) in starter.files {
                let full = folder + "/" + path
                try fm.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try Data(text.utf8).write(to: URL(fileURLWithPath: full))
            }
        } catch {
            throw .failure("cannot write \(folder): \(error.localizedDescription)")
        }
        Terminal.out("""
        created \(folder): bot.yaml, rules.yaml, tests/basics.yaml, transcripts/
        try it:
          usher check --strict \(folder)
          usher test \(folder)
          usher explain \(folder) "I want to talk to a person"
          usher chat \(folder)
          usher replay \(folder) \(folder)/transcripts/example.jsonl

        """)
        return .ok
    }

    /// `--timezone`, checked as bot.yaml's `timezone:` is; else this machine's zone when it is
    /// an IANA name (it is not on every server), else UTC.
    static func timeZone(_ given: String?) throws(UsageError) -> String {
        guard let given else {
            let local = TimeZone.current.identifier
            return local.contains("/") && TimeZone(identifier: local) != nil ? local : "UTC"
        }
        if given == "UTC" || (given.contains("/") && TimeZone(identifier: given) != nil) { return given }
        throw UsageError("--timezone: unknown time zone '\(given)'"
            + (BotConfig.nearestTimeZone(to: given).map { "; did you mean '\($0)'?" } ?? "; use an IANA name like Europe/Madrid"))
    }

    /// The folder the modelines point at, relative to the bot's folder: the schema/ of the
    /// current folder when the bot is inside it, else a copy written into the bot's folder.
    static func schemaFolder(for folder: String) throws -> String {
        let fm = FileManager.default
        let here = URL(fileURLWithPath: fm.currentDirectoryPath).standardizedFileURL.pathComponents
        let bot = URL(fileURLWithPath: folder).standardizedFileURL.pathComponents
        if fm.fileExists(atPath: "schema/rules.schema.json"), bot.count > here.count, Array(bot.prefix(here.count)) == here {
            return Array(repeating: "..", count: bot.count - here.count).joined(separator: "/") + "/schema"
        }
        try SchemaCommand.write(to: folder + "/schema")
        return "schema"
    }
}

/// The files of a starter bot, by path inside its folder.
struct StarterBot {
    let id: String
    let name: String
    let timeZone: String
    /// The JSON Schemas' folder, relative to the bot's folder.
    let schema: String

    var files: [(String, String)] {
        [("bot.yaml", botFile), ("rules.yaml", rulesFile), ("tests/basics.yaml", testsFile),
         ("transcripts/example.jsonl", transcript), ("transcripts/README.md", transcriptsReadme)]
    }

    var botFile: String { """
        # yaml-language-server: $schema=\(schema)/bot.schema.json
        #
        # The bot file: who the bot is, which rule files it reads, and the limits it keeps.
        # Editors with the YAML extension complete and check every key (the line above);
        # `usher check` says the same, with file:line:column. All keys: docs/DESIGN.md, section 2.

        # The id (lowercase letters, digits and '-'): stores, logs and metrics name the bot by it.
        bot: \(id)
        # The name replies are signed with in `usher chat`, and {{bot.name}} in templates.
        name: \(name)
        # An IANA time zone: the schedules below, and the times in reports, are read in it.
        timezone: \(timeZone)

        # The rule files, relative to this folder, read in this order (globs like rules/*.yaml
        # work too). Split them by topic once one file grows long.
        rules:
          - rules.yaml

        # Named opening hours. A rule uses them as `during: business_hours` or
        # `outside: business_hours`. Days: mon … sun, ranges like mon-fri, daily; `except:`
        # lists closed dates (YYYY-MM-DD).
        schedules:
          business_hours:
            mon-fri: "09:00-18:00"

        session:
          idle_reset: 24h               # a message after a day of silence starts a new session

        # Safety nets: instead of one more reply, the bot hands the conversation to a person.
        limits:
          max_bot_replies: 10           # replies in one session
          loop_guard:                   # replies in a short time (another bot may be talking)
            replies: 4
            within: 1m
            message: "Let me get a person to help you with this."

        # What every handoff does unless the rule's own `handoff:` says otherwise.
        handoff:
          system_message: "Thanks for your question! We're connecting you to a support agent now."
          queue: general                # the agents' queue the conversation goes to
          notify: true                  # and the agents get a notification

        """
    }

    var rulesFile: String { """
        # yaml-language-server: $schema=\(schema)/rules.schema.json
        #
        # The rules of \(name). For each customer message the rules are tried from the highest
        # `priority` down (0 when not given; equal ones in the order written). The first whose
        # `when` holds answers with its `then`, and the others are not tried, unless it says
        # `continue: true`. Every condition of a `when` must hold. All the conditions and
        # actions: docs/DESIGN.md, section 3.
        #
        # See why a message gets the answer it gets, rule by rule:
        #   usher explain <this folder> "I want to talk to a person"
        version: 1

        # Lists of words, shared by every rule as $name. Keywords match whole words in any case
        # (one written without accents matches accented text too); a phrase matches across
        # any spaces.
        lists:
          human: [human, agent, real person, a person, operator]

        rules:
          # Asked for a person: hand the conversation to an agent at once. The bot then stays
          # quiet while it waits for the agent (only rules with `while_waiting: true` speak).
          - id: wants-human
            priority: 100
            when:
              keywords: $human
            then:
              - handoff: {reason: asked-for-human}

          # An order number like AB123456. A regex's named group, (?<order>…), becomes the
          # template variable {{order}}. Write regexes in single quotes: in double quotes YAML
          # turns \\b and \\d into other characters before the regex sees them.
          - id: order-number
            priority: 50
            when:
              regex: '(?<order>\\b[A-Z]{2}\\d{6}\\b)'
            then:
              - reply: "Thanks, I've noted order {{order}}. What went wrong with it?"
              - tag: has-order          # tags stay on the conversation; rules can test them

          # Opening hours, answered one way outside them and another inside.
          - id: closed-now
            priority: 20
            when:
              keywords: [opening hours, are you open, hours]
              outside: business_hours
            then:
              - reply: "We're closed right now. We answer Monday to Friday, 09:00-18:00; leave your question and we'll get back to you."
          # A reply can offer buttons: a button sends its title back as the customer's next
          # message ("Talk to a person" matches wants-human above). {title, url} is a link.
          - id: hours
            priority: 19
            when:
              keywords: [opening hours, are you open, hours]
            then:
              - reply:
                  text: "We're open Monday to Friday, 09:00-18:00. How can we help?"
                  quick_replies:
                    - Talk to a person
                    - {title: Our help pages, url: "https://example.com/help"}

          # Thanks: a short reply, at most once every 10 minutes.
          - id: thanks
            priority: 10
            cooldown: 10m
            when:
              keywords: [thanks, thank you, thx]
            then:
              - reply: "You're welcome!"

          # Anything else: the first three messages of a session get these replies in turn,
          # the fourth goes to an agent. Every customer message counts, whichever rule
          # answered it.
          - id: opening
            when:
              customer_messages: {at_most: 3}
            then:
              - reply:
                  sequence:
                    - "Hi! How can we help you today?"
                    - "Thanks, we're looking into it."
                    - "One moment please..."
          - id: threshold
            when:
              customer_messages: {at_least: 4}
            then:
              - handoff: {reason: threshold}

        """
    }

    var testsFile: String { """
        # Rule tests: each plays a conversation against the rules, on a virtual clock, and
        # checks what the bot does after each customer message. Run them after every change:
        #   usher test <the bot's folder>
        # Passing tests print nothing; a failing step prints what it expected, what the bot
        # did, and why. The format: docs/rule-tests.md.
        tests:
          - name: three replies, then an agent
            start: 2026-11-30T10:00           # a Monday morning, in the bot's time zone
            conversation:
              - customer: "hello"
                expect: {rule: opening, reply: "Hi! How can we help you today?"}
              - customer: "my parcel is late"
                expect: {rule: opening, reply: "Thanks, we're looking into it."}
              - customer: "???"
                expect: {rule: opening}
              - customer: "still nothing"
                expect: {rule: threshold, handoff: threshold}
              - agent: "Hi, I'm Ana. Let me check."
              - customer: "thanks Ana"
                expect: silent                # a person has taken over

          - name: asking for a person hands off at once
            conversation:
              - customer: "Can I talk to a real person?"
                expect: {rule: wants-human, handoff: asked-for-human,
                         system: "Thanks for your question! We're connecting you to a support agent now."}

          - name: the order number is echoed back
            conversation:
              - customer: "my order AB123456 arrived broken"
                expect: {rule: order-number, reply: "/noted order AB123456/", tags: [has-order]}

          - name: opening hours, inside and outside them
            start: 2026-12-05T11:00           # a Saturday
            conversation:
              - customer: "what are your opening hours?"
                expect: {rule: closed-now, reply: "/closed right now/"}
              - wait: 2d                      # Monday, 11:00
              - customer: "are you open?"
                expect: {rule: hours, quick_replies: [Talk to a person, {title: Our help pages, url: "https://example.com/help"}]}
              - customer: "Talk to a person"    # the button pressed
                expect: {rule: wants-human, handoff: asked-for-human}

          - name: thanks gets one reply in ten minutes
            conversation:
              - customer: "thanks!"
                expect: {rule: thanks, reply: "You're welcome!"}
              - customer: "thank you"
                expect: {rule: opening}       # the cooldown holds thanks back

        """
    }

    /// A conversation in the chat-dataset shape (docs/replay.md): replay gives its turns times
    /// from 10:00 on Monday 2026-11-30 in the bot's zone.
    var transcript: String {
        #"{"id":"example-1","turns":[{"role":"user","content":"hello"},{"role":"user","content":"my order AB123456 arrived broken"},{"role":"agent","content":"Sorry to hear that! I'm Ana, let me check."},{"role":"user","content":"thank you"}]}"#
            + "\n"
            + #"{"id":"example-2","turns":[{"role":"user","content":"are you open on Saturday?"},{"role":"user","content":"I want to talk to a real person"}]}"#
            + "\n"
    }

    var transcriptsReadme: String { """
        # Transcripts of \(name)

        Recorded conversations to dry-run the rules against before they go live. Nothing is
        written anywhere: the report says what the bot would have said, where it would have
        handed off, and which rules never fired.

            usher replay <the bot's folder> <the bot's folder>/transcripts/example.jsonl
            usher replay <the bot's folder> <the bot's folder>/transcripts/*.jsonl --format html --out replay.html

        Files are JSON lines, plain or gzip-compressed: one message a line
        (`{"conversation", "id", "at", "from", "text"}`) or one conversation a line
        (`{"id", "turns": [{"role", "content"}]}`, like `example.jsonl`). The formats and the
        report: docs/replay.md.

        """
    }
}
