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

/* MHD_start_daemon is variadic: Swift cannot call it. Start an internally threaded daemon on
   `addr` (network order, IPv4) with one option list, the handler and its closure pointer. */
static inline struct MHD_Daemon *usher_mhd_start(const struct sockaddr_in *addr,
                                                 MHD_AccessHandlerCallback handler, void *context) {
    return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, ntohs(addr->sin_port),
                            NULL, NULL, handler, context,
                            MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)addr,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
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
#endif
