#ifndef USHER_CSTEMMER_SHIM_H
#define USHER_CSTEMMER_SHIM_H
/* Snowball's stemmers (Debian's libstemmer-dev, which ships no pkg-config file). */
#include <libstemmer.h>
#endif
