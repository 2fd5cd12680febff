#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// TCP on 127.0.0.1 for the tests that need a port: one free now, and what the kernel says of
/// this process's own connections to one. Asked of the sockets themselves, not of the machine's
/// connection tables (`/proc/net/tcp`), which other processes change as they are read.
enum Loopback {
    /// The TCP settings of one connection, as the kernel applies them (`getsockopt`).
    struct Settings: Equatable, CustomStringConvertible {
        /// `SO_KEEPALIVE`: the socket is probed once it has been idle for `idle`.
        var keepalive: Bool
        /// Seconds idle before the first probe, seconds between probes, unanswered probes that end it.
        var idle: Int32, interval: Int32, count: Int32
        /// Milliseconds data may stay unacknowledged (`TCP_USER_TIMEOUT`; 0: the system's).
        var userTimeout: UInt32

        var description: String {
            "keepalive \(keepalive ? "on" : "off") idle \(idle) s, every \(interval) s, \(count) probes; user timeout \(userTimeout) ms"
        }
    }

    /// A port on 127.0.0.1 that no socket uses now: the kernel's choice for a socket bound to
    /// port 0, released at once for a server to take (which a random pick from a range cannot
    /// promise on a machine where other test runs listen too).
    static func freePort() throws -> Int {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw LoopbackError("no socket (errno \(errno))") }
        defer { close(s) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, length) == 0 && getsockname(s, $0, &length) == 0 }
        }
        guard bound else { throw LoopbackError("cannot bind 127.0.0.1:0 (errno \(errno))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// This process's TCP connections to 127.0.0.1:`port`, by their local port, with their
    /// settings. Found by asking every descriptor below the process's limit who its peer is.
    static func connections(to port: Int) -> [Int: Settings] {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        var out: [Int: Settings] = [:]
        for fd in 0..<Int32(clamping: min(limit.rlim_cur, 1 << 20)) {
            guard let peer = address(fd, getpeername), peer.sin_family == sa_family_t(AF_INET),
                  peer.sin_addr.s_addr == inet_addr("127.0.0.1"), Int(UInt16(bigEndian: peer.sin_port)) == port,
                  let local = address(fd, getsockname) else { continue }
            out[Int(UInt16(bigEndian: local.sin_port))] = Settings(
                keepalive: option(fd, SOL_SOCKET, SO_KEEPALIVE, as: Int32.self) != 0,
                idle: option(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE, as: Int32.self),
                interval: option(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, as: Int32.self),
                count: option(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, as: Int32.self),
                userTimeout: option(fd, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, as: UInt32.self))
        }
        return out
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    /// The IPv4 address `call` (`getpeername`, `getsockname`) gives for `fd`; nil when `fd` is
    /// not an open socket, or not IPv4.
    private static func address(_ fd: Int32, _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32) -> sockaddr_in? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, &length) == 0 }
        }
        return ok && length == socklen_t(MemoryLayout<sockaddr_in>.size) ? address : nil
    }

    private static func option<T: FixedWidthInteger>(_ fd: Int32, _ level: Int32, _ name: Int32, as: T.Type) -> T {
        var value: T = 0
        var length = socklen_t(MemoryLayout<T>.size)
        return getsockopt(fd, level, name, &value, &length) == 0 ? value : 0
    }
}

struct LoopbackError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
