/* sqlite_floor.c -- lower bound for `badgeflow filter --state X.sqlite`: SQLite's own work.
 *
 * Usage: sqlite_floor DB ACCOUNTS COUNT [BATCH] [--sorted]
 *
 * Picks COUNT account ids "a0".."a<ACCOUNTS-1>" at random (a fixed seed), as the fleet
 * bench's uniform events do, and for each batch of BATCH (default 51200, about what one
 * checkpoint of the bench commits):
 *   - reads each account's row (data and compact) on a read-only connection, in one read
 *     transaction, copying the bytes out, as a read-ahead connection does;
 *   - writes each row back on a read-write connection in one transaction: the same UPSERT
 *     the filter runs, with the row's own JSON and cache bytes (a missing cache written as an
 *     empty blob; devices and marks as 2 and 3), then COMMIT.
 * The connections are set up as the filter's: WAL, synchronous=FULL, a 48 MiB page cache
 * for the writer and 8 MiB for the reader, SQLite's memory statistics off. With --sorted a
 * batch is written in key order, as the filter does since it sorts a large commit.
 *
 * Prints CPU microseconds per account for the reads, the writes and the COMMITs (the
 * WAL's write, its fsync and the automatic checkpoint), and their wall time. No JSON is
 * parsed or built and nothing is decoded: it is what any one-row-per-account store over
 * this database pays, on one thread.
 *
 * Build: cc -O2 sqlite_floor.c -lsqlite3 -o sqlite_floor
 * The database is modified (its rows rewritten as above): run it on a copy.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static unsigned long long rng = 0x9E3779B97F4A7C15ULL;
static unsigned long long next(unsigned long long n) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (rng >> 33) % n;
}

/* The ids a batch's indices are sorted by. */
static char **sortIds;
static int byId(const void *a, const void *b) {
    return strcmp(sortIds[*(const long *)a], sortIds[*(const long *)b]);
}

static void check(int rc, sqlite3 *db, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "sqlite_floor: %s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: sqlite_floor DB ACCOUNTS COUNT [BATCH] [--sorted]\n");
        return 2;
    }
    long accounts = atol(argv[2]), count = atol(argv[3]);
    long batch = argc > 4 && argv[4][0] != '-' ? atol(argv[4]) : 51200;
    int sorted = strcmp(argv[argc - 1], "--sorted") == 0;
    if (accounts <= 0 || count <= 0 || batch <= 0) return 2;
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);

    char **ids = malloc(sizeof(char *) * count);
    for (long i = 0; i < count; i++) {
        char id[32];
        snprintf(id, sizeof id, "a%llu", next((unsigned long long)accounts));
        ids[i] = strdup(id);
    }
    sqlite3 *w, *r;
    check(sqlite3_open_v2(argv[1], &w, SQLITE_OPEN_READWRITE, NULL), w, "open");
    check(sqlite3_exec(w, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-49152", 0, 0, 0), w,
          "pragmas");
    check(sqlite3_open_v2(argv[1], &r, SQLITE_OPEN_READONLY, NULL), r, "open read-only");
    check(sqlite3_exec(r, "PRAGMA cache_size=-8192", 0, 0, 0), r, "pragmas");
    sqlite3_stmt *get, *put;
    check(sqlite3_prepare_v2(r, "SELECT data, compact FROM accounts WHERE id = ?1", -1, &get, NULL), r, "prepare");
    check(sqlite3_prepare_v2(w,
                             "INSERT INTO accounts(id, data, devices, marks, compact) VALUES (?1, ?2, ?3, ?4, ?5) "
                             "ON CONFLICT(id) DO UPDATE SET data = excluded.data, devices = excluded.devices, "
                             "marks = excluded.marks, compact = excluded.compact",
                             -1, &put, NULL),
          w, "prepare");

    char **data = calloc(batch, sizeof(char *)), **blob = calloc(batch, sizeof(char *));
    int *dataLen = calloc(batch, sizeof(int)), *blobLen = calloc(batch, sizeof(int));
    long *order = calloc(batch, sizeof(long));
    double readCPU = 0, writeCPU = 0, commitCPU = 0, readWall = 0, writeWall = 0, commitWall = 0;
    long found = 0;
    for (long b = 0; b < count; b += batch) {
        long n = b + batch < count ? batch : count - b;
        char **part = ids + b;
        double c0 = now(CLOCK_THREAD_CPUTIME_ID), t0 = now(CLOCK_MONOTONIC);
        check(sqlite3_exec(r, "BEGIN", 0, 0, 0), r, "begin");
        for (long i = 0; i < n; i++) {
            data[i] = NULL;
            sqlite3_bind_text(get, 1, part[i], -1, SQLITE_STATIC);
            if (sqlite3_step(get) == SQLITE_ROW) {
                dataLen[i] = sqlite3_column_bytes(get, 0);
                data[i] = malloc(dataLen[i] + 1);
                memcpy(data[i], sqlite3_column_text(get, 0), dataLen[i]);
                blobLen[i] = sqlite3_column_bytes(get, 1);
                blob[i] = malloc(blobLen[i] + 1);
                if (blobLen[i] > 0) memcpy(blob[i], sqlite3_column_blob(get, 1), blobLen[i]);
                found++;
            }
            sqlite3_reset(get);
        }
        check(sqlite3_exec(r, "COMMIT", 0, 0, 0), r, "commit read");
        double c1 = now(CLOCK_THREAD_CPUTIME_ID), t1 = now(CLOCK_MONOTONIC);
        /* Arrival order, or key order (sorted on the writing side, as the filter does). */
        for (long i = 0; i < n; i++) order[i] = i;
        if (sorted) {
            sortIds = part;
            qsort(order, n, sizeof(long), byId);
        }
        check(sqlite3_exec(w, "BEGIN IMMEDIATE", 0, 0, 0), w, "begin");
        for (long k = 0; k < n; k++) {
            long i = order[k];
            if (!data[i]) continue;
            sqlite3_bind_text(put, 1, part[i], -1, SQLITE_STATIC);
            sqlite3_bind_text(put, 2, data[i], dataLen[i], SQLITE_STATIC);
            sqlite3_bind_int(put, 3, 2);
            sqlite3_bind_int(put, 4, 3);
            sqlite3_bind_blob(put, 5, blob[i], blobLen[i], SQLITE_STATIC);
            check(sqlite3_step(put), w, "upsert");
            sqlite3_reset(put);
        }
        double c2 = now(CLOCK_THREAD_CPUTIME_ID), t2 = now(CLOCK_MONOTONIC);
        check(sqlite3_exec(w, "COMMIT", 0, 0, 0), w, "commit");
        double c3 = now(CLOCK_THREAD_CPUTIME_ID), t3 = now(CLOCK_MONOTONIC);
        readCPU += c1 - c0, writeCPU += c2 - c1, commitCPU += c3 - c2;
        readWall += t1 - t0, writeWall += t2 - t1, commitWall += t3 - t2;
        for (long i = 0; i < n; i++) free(data[i]), free(blob[i]), data[i] = blob[i] = NULL;
    }
    printf("sqlite floor (%s, %ld of %ld accounts, %ld a commit): CPU per account: read %.1f us, upsert %.1f us, "
           "COMMIT %.1f us (wall: %.1f, %.1f, %.1f us)\n",
           sorted ? "key order" : "random order", found, count, batch, readCPU * 1e6 / count, writeCPU * 1e6 / count,
           commitCPU * 1e6 / count, readWall * 1e6 / count, writeWall * 1e6 / count, commitWall * 1e6 / count);
    sqlite3_finalize(get);
    sqlite3_finalize(put);
    sqlite3_close(r);
    sqlite3_close(w);
    return 0;
}
