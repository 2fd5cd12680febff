#ifndef USHER_ICU_H
#define USHER_ICU_H
#include <stdint.h>
int32_t usher_icu_placeholder(void);
#endif
