#ifndef USHER_CLIBPQ_SHIM_H
#define USHER_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#include <poll.h>
#include <dlfcn.h>

/* Waits until the connection's socket is readable or `timeout_ms` passes: 1 readable, 0 timeout,
   -1 error. (poll's struct and flags are awkward from Swift.) */
static inline int usher_pq_wait_readable(PGconn *conn, int timeout_ms) {
    int fd = PQsocket(conn);
    if (fd < 0) return -1;
    struct pollfd p = { .fd = fd, .events = POLLIN, .revents = 0 };
    int r = poll(&p, 1, timeout_ms);
    if (r < 0) return -1;
    return r > 0 ? 1 : 0;
}
/* Bytes OpenSSL has decrypted for the connection that libpq has not taken yet: a readable socket
   does not announce them, so a caller about to wait for the socket reads again first. 0 without
   TLS. SSL_pending is looked up at run time in the process (libpq loaded libssl): no build
   dependency on OpenSSL's headers. */
static inline int usher_pq_tls_pending(PGconn *conn) {
    void *ssl = PQsslStruct(conn, "OpenSSL");
    if (!ssl) return 0;
    static int (*pending)(const void *) = 0;
    if (!pending) {
        void *self = dlopen(NULL, RTLD_LAZY);
        if (self) pending = (int (*)(const void *))dlsym(self, "SSL_pending");
        if (!pending) return 0;
    }
    return pending(ssl);
}
#endif
