#ifndef USHER_CMICROHTTPD_SHIM_H
#define USHER_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
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
#endif
