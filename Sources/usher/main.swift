import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Writing to a closed pipe (`usher replay … | head`, a stdio consumer that went away) must fail
// with an error, not kill the process.
signal(SIGPIPE, SIG_IGN)

exit(CLI.main(Array(CommandLine.arguments.dropFirst())).rawValue)
