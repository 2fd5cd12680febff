#include "usher_icu.h"
int32_t usher_icu_placeholder(void) { return 0; }
