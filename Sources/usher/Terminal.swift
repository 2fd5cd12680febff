import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Output helpers: stdout/stderr, and whether to colour.
enum Terminal {
    static func out(_ s: String) { FileHandle.standardOutput.write(Data(s.utf8)) }
    static func err(_ s: String) { FileHandle.standardError.write(Data(s.utf8)) }

    /// Rows as columns padded to their widest cell (the last column unpadded), one line each.
    static func table(_ rows: [[String]]) {
        guard let first = rows.first else { return }
        let widths = (0..<first.count).map { c in rows.map { $0[c].count }.max()! }
        for r in rows {
            out(r.enumerated().map { i, v in i == r.count - 1 ? v : v.padding(widths[i] + 1) }.joined(separator: " ") + "\n")
        }
    }

    /// Colour only on a terminal, and never when NO_COLOR is set (no-color.org).
    static func colour(stdout: Bool = true) -> Bool {
        ProcessInfo.processInfo.environment["NO_COLOR"] == nil && isatty(stdout ? 1 : 2) == 1
    }
}

/// Exit codes, as sysexits(3) names them.
enum ExitCode: Int32 {
    case ok = 0
    case failure = 1
    case usage = 64
    case dataError = 65
    case unavailable = 69
}
