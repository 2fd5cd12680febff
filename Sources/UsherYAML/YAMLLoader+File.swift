#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import UsherDiagnostics

extension YAMLLoader {
    /// Reads and parses the file at `path`; see `load(path:bytes:limits:)`.
    ///
    /// A missing or unreadable file is an `unreadable-file` error located at `path:1:1`; a file
    /// larger than `limits.maxBytes` is rejected without being read.
    public static func loadFile(path: String, limits: YAMLLimits = .default) -> (YAMLDocument?, [Diagnostic]) {
        switch readFile(path: path, limit: limits.maxBytes) {
        case .bytes(let bytes): return load(path: path, bytes: bytes, limits: limits)
        case .refused(let diagnostic): return (nil, [diagnostic])
        }
    }

    /// The bytes of the file at `path`, or why not: `unreadable-file`, or `file-too-large` for
    /// a file over `limit` bytes — known from its size before anything is read, so a 1 GiB file
    /// costs a `stat`, not a gigabyte (a pipe is read up to `limit + 1` bytes).
    public static func readFile(path: String, limit: Int) -> FileContents {
        switch contents(ofFile: path, limit: limit) {
        case .success(let bytes):
            return .bytes(bytes)
        case .failure(.tooLarge(let size)):
            return .refused(.error("file-too-large", tooLargeMessage(size: size, limit: limit),
                                   at: SourceLocation(file: path, line: 1, column: 1)))
        case .failure(.unreadable(let reason)):
            return .refused(.error("unreadable-file", "cannot read the file: \(reason)",
                                   at: SourceLocation(file: path, line: 1, column: 1)))
        }
    }

    private enum ReadFailure: Error {
        case tooLarge(Int)
        case unreadable(String)
    }

    /// The file's bytes, reading at most `limit + 1` of them (a pipe or a growing file has no
    /// trustworthy size).
    private static func contents(ofFile path: String, limit: Int) -> Result<[UInt8], ReadFailure> {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return .failure(.unreadable(reason(errno))) }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(.unreadable(reason(errno))) }
        if (info.st_mode & S_IFMT) == S_IFDIR { return .failure(.unreadable(reason(EISDIR))) }
        if (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) > limit {
            return .failure(.tooLarge(Int(info.st_size)))
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(reason(errno)))
            }
            if n == 0 { break }
            bytes += chunk[0..<n]
            if bytes.count > limit { return .failure(.tooLarge(bytes.count)) }
        }
        return .success(bytes)
    }

    private static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "no such file"
        case EACCES: return "permission denied"
        case EISDIR: return "it is a directory"
        default: return String(cString: strerror(code))
        }
    }
}

/// A file's bytes as `YAMLLoader.readFile` read them, or the diagnostic saying why it did not.
public enum FileContents: Sendable {
    case bytes([UInt8])
    case refused(Diagnostic)
}
