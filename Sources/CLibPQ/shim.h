#ifndef USHER_CLIBPQ_SHIM_H
#define USHER_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#include <poll.h>

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
#endif
