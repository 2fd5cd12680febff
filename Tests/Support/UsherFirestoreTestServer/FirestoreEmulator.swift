public import Foundation
import Synchronization
import UsherHTTP

/// Google's Firestore emulator for the test run: the JVM started directly (1.5–2 s, where
/// `gcloud emulators firestore start` takes 2.5–8 s and leaves java running when signalled) on
/// a free loopback port, stopped when the process exits (`POST /shutdown`, then SIGTERM to java)
/// — or, when the process was killed, by the next run that starts one (`sweepOrphans`).
/// Each test takes a project of its own (`project()`): projects are independent and free.
public final class FirestoreEmulator: Sendable {
    /// `127.0.0.1:PORT`, as `FIRESTORE_EMULATOR_HOST` wants it.
    public let host: String
    public let pid: pid_t
    let directory: String
    let http: HTTPClient
    private let projects = Atomic<Int>(0)

    /// The emulator shared by everything in this process, started on first use.
    public static let shared: Result<FirestoreEmulator, any Error> = Result { try FirestoreEmulator() }

    /// `shared`, awaited on a thread of its own (starting it blocks for seconds).
    public static func ready() async throws -> FirestoreEmulator {
        try await withCheckedThrowingContinuation { c in
            Thread.detachNewThread { c.resume(with: shared) }
        }
    }

    /// The emulator's jar, where Debian's google-cloud-cli package puts it.
    public static func jar() throws -> String {
        var roots = ["/usr/lib/google-cloud-sdk", "/usr/share/google-cloud-sdk", "/opt/google-cloud-sdk"]
        if let root = ProcessInfo.processInfo.environment["CLOUDSDK_ROOT_DIR"] { roots.insert(root, at: 0) }
        for root in roots {
            let jar = root + "/platform/cloud-firestore-emulator/cloud-firestore-emulator.jar"
            if FileManager.default.fileExists(atPath: jar) { return jar }
        }
        throw EmulatorError("the Firestore emulator is not installed (no cloud-firestore-emulator.jar under \(roots.joined(separator: ", "))); "
                            + "install google-cloud-cli-firestore-emulator and Java 17")
    }

    public init() throws {
        let jar = try Self.jar()
        let client = HTTPClient(connections: 2)
        http = client
        Self.sweepOrphans()
        let dir = NSTemporaryDirectory() + "usher-firestore-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        directory = dir
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try String(getpid()).write(toFile: dir + "/owner", atomically: true, encoding: .utf8)
        FileManager.default.createFile(atPath: dir + "/emulator.log", contents: nil)
        var lastError: (any Error)?
        for _ in 0..<3 {
            let port = try Self.freePort()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["java", "-Xss2m", "-cp", jar, "com.google.cloud.datastore.emulator.firestore.CloudFirestore",
                                 "start", "--host=127.0.0.1", "--port=\(port)"]
            let log = FileHandle(forWritingAtPath: dir + "/emulator.log") ?? .nullDevice
            process.standardOutput = log
            process.standardError = log
            try process.run()
            try String(process.processIdentifier).write(toFile: dir + "/java", atomically: true, encoding: .utf8)
            if Self.waitUntilReady(port: port, pid: process.processIdentifier, http: client) {
                host = "127.0.0.1:\(port)"
                pid = process.processIdentifier
                Self.started.withLock { $0.append(self) }
                Self.registerExitHandler()
                return
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            lastError = EmulatorError("the Firestore emulator did not answer on port \(port) within 60 s; its log: \(dir)/emulator.log")
        }
        throw lastError!
    }

    /// A project id no other test uses: its data starts empty.
    public func project(_ prefix: String = "t") -> String {
        "\(prefix)-\(getpid())-\(projects.add(1, ordering: .relaxed).newValue)"
    }

    /// Stops the emulator: `POST /shutdown`, then SIGTERM (and SIGKILL after 5 s) to java.
    public func stop() {
        let semaphore = DispatchSemaphore(value: 0)
        let http = self.http
        let host = self.host
        Thread.detachNewThread {
            Task {
                _ = try? await http.send(HTTPRequest(method: "POST", url: "http://\(host)/shutdown", timeout: .seconds(2)))
                semaphore.signal()
            }
        }
        _ = semaphore.wait(timeout: .now() + 3)
        kill(pid, SIGTERM)
        for _ in 0..<50 {
            if kill(pid, 0) != 0 { break }
            usleep(100_000)
        }
        kill(pid, SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: -

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw EmulatorError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard bound else { throw EmulatorError("bind: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Polls `GET /` until it answers `Ok` (60 s at most: a cold JVM on a busy machine).
    static func waitUntilReady(port: Int, pid: pid_t, http: HTTPClient) -> Bool {
        final class Flag: Sendable { let ready = Atomic<Bool>(false) }
        let flag = Flag()
        let semaphore = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            Task {
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline && kill(pid, 0) == 0 {
                    if let r = try? await http.send(HTTPRequest(url: "http://127.0.0.1:\(port)/", timeout: .seconds(2))),
                       r.status == 200, String(decoding: r.body, as: UTF8.self).hasPrefix("Ok") {
                        flag.ready.store(true, ordering: .relaxed)
                        break
                    }
                    try? await Task.sleep(for: .milliseconds(100))
                }
                semaphore.signal()
            }
        }
        semaphore.wait()
        return flag.ready.load(ordering: .relaxed)
    }

    private static let started = Mutex<[FirestoreEmulator]>([])
    private static let registered = Atomic<Bool>(false)

    private static func registerExitHandler() {
        if registered.exchange(true, ordering: .relaxed) == false {
            atexit { FirestoreEmulator.started.withLock { all in for e in all { e.stop() }; all = [] } }
        }
    }

    /// Stops emulators of earlier runs whose test process is gone (killed before its exit handler).
    static func sweepOrphans() {
        let tmp = NSTemporaryDirectory()
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: tmp) else { return }
        for entry in entries where entry.hasPrefix("usher-firestore-") {
            let dir = tmp + entry
            guard let owner = (try? String(contentsOfFile: dir + "/owner", encoding: .utf8)).flatMap({ pid_t($0) }),
                  kill(owner, 0) != 0, errno == ESRCH else { continue }
            if let java = (try? String(contentsOfFile: dir + "/java", encoding: .utf8)).flatMap({ pid_t($0) }) { kill(java, SIGKILL) }
            try? FileManager.default.removeItem(atPath: dir)
        }
    }
}

public struct EmulatorError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
