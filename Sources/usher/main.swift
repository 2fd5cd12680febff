import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Writing to a closed pipe (`usher replay … | head`, a stdio consumer that went away) must fail
// with an error, not kill the process.
signal(SIGPIPE, SIG_IGN)

// The worker handles SIGTERM, SIGINT and SIGHUP on a thread of its own (`SignalThread`). They
// are blocked here, before any other thread exists, so that one arriving while the worker
// starts up waits for that thread instead of being lost or killing the process.
if CommandLine.arguments.dropFirst().first == "run" { SignalThread.block() }

exit(CLI.main(Array(CommandLine.arguments.dropFirst())).rawValue)
