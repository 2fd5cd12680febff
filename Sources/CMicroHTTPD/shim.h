#ifndef USHER_CMICROHTTPD_SHIM_H
#define USHER_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/* MHD_start_daemon is variadic: Swift cannot call it. Starts a daemon on `addr` (network order,
   IPv4) with its own thread on epoll (Linux) or poll (elsewhere) — never select(), which fails
   once a descriptor reaches FD_SETSIZE (1,024) — that may suspend and resume connections.
   `context` is the closure pointer of every callback. The logger comes first, so that messages
   of the start itself reach it too. */
static inline struct MHD_Daemon *usher_mhd_start(const struct sockaddr_in *addr,
                                                 MHD_AccessHandlerCallback handler, void *context,
                                                 MHD_LogCallback logger,
                                                 MHD_NotifyConnectionCallback notify_connection,
                                                 MHD_RequestCompletedCallback notify_completed,
                                                 unsigned int connection_limit, unsigned int per_ip_limit,
                                                 unsigned int idle_timeout_seconds) {
#ifdef __linux__
    unsigned int loop = MHD_USE_EPOLL_INTERNAL_THREAD;
#else
    unsigned int loop = MHD_USE_POLL_INTERNAL_THREAD;
#endif
    return MHD_start_daemon(loop | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, ntohs(addr->sin_port),
                            NULL, NULL, handler, context,
                            MHD_OPTION_EXTERNAL_LOGGER, logger, context,
                            MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)addr,
                            MHD_OPTION_NOTIFY_CONNECTION, notify_connection, context,
                            MHD_OPTION_NOTIFY_COMPLETED, notify_completed, context,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds,
                            MHD_OPTION_END);
}

/* A response holding a copy of `data` (the enum constant does not import cleanly). */
static inline struct MHD_Response *usher_mhd_copy_response(const void *data, size_t size) {
    return MHD_create_response_from_buffer(size, (void *)data, MHD_RESPMEM_MUST_COPY);
}

/* The port the daemon is bound to (useful with port 0). */
static inline uint16_t usher_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/* The socket of a connection (MHD_get_connection_info is variadic); -1 when unknown. */
static inline int usher_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? (int)info->connect_fd : -1;
}

/* Whether a connection notification is its start (the enum's members do not import by name). */
static inline int usher_mhd_is_start(enum MHD_ConnectionNotificationCode code) {
    return code == MHD_CONNECTION_NOTIFY_STARTED;
}

/* The request headers, one call of `each` per header (names as the client sent them). */
static inline int usher_mhd_headers(struct MHD_Connection *connection, MHD_KeyValueIterator each, void *context) {
    return MHD_get_connection_values(connection, MHD_HEADER_KIND, each, context);
}
#endif
