#ifndef USHER_CZLIB_SHIM_H
#define USHER_CZLIB_SHIM_H
#include <zlib.h>

/* inflateInit2 is a macro Swift cannot import. */
static inline int usher_inflate_init2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}
#endif
