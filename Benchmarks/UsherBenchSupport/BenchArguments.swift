import Foundation

/// The command line of a benchmark, checked before it starts: `--help` (or `-h`) prints its
/// usage and exits 0; an option it does not know, or one without its value, stops it with exit
/// 64 — a misspelt option would otherwise run the whole benchmark, minutes long, without it.
public enum BenchArguments {
    /// `flags`: options alone (`--quick`); `values`: options followed by a value (`--rounds 3`,
    /// repeatable ones too). Returns when every argument is one of them.
    public static func check(usage: String, flags: Set<String>, values: Set<String>,
                             _ arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        let tool = URL(fileURLWithPath: CommandLine.arguments[0]).lastPathComponent
        if arguments.contains("--help") || arguments.contains("-h") {
            print(usage)
            exit(0)
        }
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if flags.contains(a) {
                i += 1
            } else if values.contains(a) {
                guard i + 1 < arguments.count, !arguments[i + 1].hasPrefix("--") else { fail(tool, "\(a) needs a value") }
                i += 2
            } else {
                fail(tool, "unknown option \(a)")
            }
        }
    }

    private static func fail(_ tool: String, _ why: String) -> Never {
        FileHandle.standardError.write(Data("\(tool): \(why) (\(tool) --help lists the options)\n".utf8))
        exit(64)
    }
}
