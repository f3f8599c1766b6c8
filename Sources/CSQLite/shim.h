#ifndef BADGEFLOW_CSQLITE_SHIM_H
#define BADGEFLOW_CSQLITE_SHIM_H
#include <sqlite3.h>

/// Binds text that SQLite copies (SQLITE_TRANSIENT is a macro Swift cannot import).
static inline int badgeflow_sqlite_bind_text(sqlite3_stmt *stmt, int index, const char *text, int bytes) {
    return sqlite3_bind_text(stmt, index, text, bytes, SQLITE_TRANSIENT);
}

/// Binds a blob that SQLite copies.
static inline int badgeflow_sqlite_bind_blob(sqlite3_stmt *stmt, int index, const void *bytes, int count) {
    return sqlite3_bind_blob(stmt, index, bytes, count, SQLITE_TRANSIENT);
}

/// Turns off SQLite's memory statistics (SQLITE_CONFIG_MEMSTATUS; sqlite3_config is
/// variadic, which Swift cannot call). With them on, every sqlite3_malloc and sqlite3_free
/// takes one process-wide mutex, and the filter's connections, each on its own thread,
/// queue on it. Must run before SQLite initializes (before the first connection opens);
/// returns SQLITE_MISUSE after that.
static inline int badgeflow_sqlite_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
