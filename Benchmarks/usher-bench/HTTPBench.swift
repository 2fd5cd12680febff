import Foundation
import UsherRuntime
import UsherTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `usher-bench --only http`: `/healthz` latency, idle and while 1,500 connections are held
/// open against the server (each half a request, from eight loopback addresses, as a slow or
/// hostile client would), in the same run. Each probe is a new connection with
/// `Connection: close`, as a health checker makes them.
enum HTTPBench {
    static func run(quick: Bool) {
        let held = 1_500
        let probes = quick ? 500 : 2_000
        guard RawConnection.raiseOpenFileLimit(to: 2 * held + 512) else {
            print("  skipped: needs an open-file limit (ulimit -Hn) of \(2 * held + 512)")
            return
        }
        let server: HTTPServer
        do {
            server = try HTTPServer(address: "127.0.0.1:0", log: Logger(sink: { _ in })) { _ in .init(body: "ok\n") }
        } catch {
            print("  http bench failed: \(error.message)")
            return
        }
        defer { server.close() }
        do {
            for round in 1...2 {
                let idle = try probe(server.address, probes)
                var open: [RawConnection] = []
                for i in 0..<held {
                    let c = try RawConnection(to: server.address, from: "127.0.0.\(10 + i % 8)")
                    try c.send("GET /metrics HTTP/1.1\r\nHost: held\r\n")
                    open.append(c)
                }
                let busy = try probe(server.address, probes)
                let stillOpen = server.openConnections
                for c in open { c.close() }
                var load = [Double](repeating: 0, count: 3)
                getloadavg(&load, 3)
                print("  round \(round): /healthz, \(probes) probes: idle p50 \(ms(idle, 0.5)) p99 \(ms(idle, 0.99)) max \(ms(idle, 1)) ms; "
                      + "with \(held) connections held (\(stillOpen) open at the end) p50 \(ms(busy, 0.5)) p99 \(ms(busy, 0.99)) "
                      + "max \(ms(busy, 1)) ms; p99 ratio \(fmt(quantile(busy, 0.99) / quantile(idle, 0.99), 2))×; "
                      + "load average \(fmt(load[0], 2))")
                // Let the server see the held connections go before the next idle round.
                while server.openConnections > 0 { Thread.sleep(forTimeInterval: 0.01) }
            }
        } catch {
            print("  http bench failed: \(error)")
        }
    }

    /// `count` probes one after another: each one's time from connect to the end of the answer, in seconds.
    static func probe(_ address: String, _ count: Int) throws -> [Double] {
        var out: [Double] = []
        out.reserveCapacity(count)
        for _ in 0..<count {
            let start = ContinuousClock.now
            let r = try RawConnection.request(address, "GET", "/healthz", timeout: .seconds(30))
            guard r?.status == 200 else { throw RawConnection.Failure("a probe got \(r.map { "\($0.status)" } ?? "no answer")") }
            out.append((ContinuousClock.now - start).seconds)
        }
        return out.sorted()
    }

    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        sorted[min(sorted.count - 1, Int((Double(sorted.count) * q).rounded(.up)) - 1)]
    }

    static func ms(_ sorted: [Double], _ q: Double) -> String { fmt(quantile(sorted, q) * 1000, 2) }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
