#ifndef USHER_CSQLITE_SHIM_H
#define USHER_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT and SQLITE_STATIC are cast macros Swift cannot import. */
static inline sqlite3_destructor_type usher_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type usher_sqlite_static(void) { return SQLITE_STATIC; }

/* sqlite3_config is variadic, which Swift cannot call. Turning off the memory statistics takes a
   global mutex off every allocation; it must run before SQLite initializes (else it returns
   SQLITE_MISUSE and changes nothing). */
static inline int usher_sqlite_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
