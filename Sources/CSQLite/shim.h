#ifndef BADGEFLOW_CSQLITE_SHIM_H
#define BADGEFLOW_CSQLITE_SHIM_H
#include <sqlite3.h>

/// Binds text that SQLite copies (SQLITE_TRANSIENT is a macro Swift cannot import).
static inline int badgeflow_sqlite_bind_text(sqlite3_stmt *stmt, int index, const char *text, int bytes) {
    return sqlite3_bind_text(stmt, index, text, bytes, SQLITE_TRANSIENT);
}

#endif
