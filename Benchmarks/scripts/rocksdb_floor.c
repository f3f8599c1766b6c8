/* rocksdb_floor.c -- lower bound for a RocksDB state under `badgeflow filter`: RocksDB's own work.
 *
 * Usage: rocksdb_floor DIR ACCOUNTS COUNT [BATCH] [--multiget] [--no-wal] [--sorted] [--cache MIB]
 *
 * DIR is a RocksDB folder. If it holds no database yet, one is made with ACCOUNTS keys
 * "a0".."a<ACCOUNTS-1>" (the fleet bench's account ids) and a value of 90-110 bytes each
 * (about the size of an account's binary form in the SQLite row cache; the bytes are made
 * up, not an account's), then flushed and compacted into a settled tree; that load is not
 * measured. Then, as sqlite_floor does, it picks COUNT ids at random (the same fixed seed
 * and draw as sqlite_floor) and for each batch of BATCH (default 51200, what sqlite_floor
 * commits at once):
 *   - reads each account's value, copying the bytes out, as a read-ahead thread would:
 *     one Get per account, or with --multiget a MultiGet of 1,024 keys at a time;
 *   - puts each found account back, one byte changed, into one WriteBatch (with --sorted in
 *     the bytewise order of their keys, as the store's checkpoints do, the sort counted in
 *     the WriteBatch's CPU; an account drawn twice in a batch is put once);
 *   - commits the batch: written with the WAL synced (fsync per batch), or with --no-wal
 *     written with the WAL off and the memtable then flushed to a table file (waited for),
 *     which is as durable once the flush returns.
 * After the last batch the memtable is flushed and the run waits until no flush or
 * compaction is pending, so the LSM's deferred work (flushes, compactions) is counted.
 *
 * Options, sized to the 1M fleet bench's 512 MiB budget, of which a no-state run takes
 * ~335 MiB: a 64 MiB LRU block cache (--cache to change) (index and filter blocks held
 * with their tables), a restart point every 4 keys of a data block, memtables of 32 MiB,
 * at most 2 (64 MiB), a 10-bit Bloom filter, no
 * compression (the values are binary and short), 2 background jobs (2 cores), universal
 * compaction and a Bloom filter over each memtable's keys, as the store sets them.
 *
 * Prints CPU microseconds per account on the calling thread for the reads, the WriteBatch
 * and the commit, the CPU of RocksDB's background threads over the same time (flushes,
 * compactions), the process's total, wall times, and the peak RSS. No JSON is parsed or
 * built and nothing is decoded.
 *
 * Build: cc -O2 rocksdb_floor.c -lrocksdb -o rocksdb_floor
 * The database is modified (its values rewritten): run it on a folder of its own.
 */
#include <rocksdb/c.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { MULTIGET_CHUNK = 1024 };

static double now(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* The draw of sqlite_floor.c, so both floors visit the same accounts. */
static unsigned long long rng = 0x9E3779B97F4A7C15ULL;
static unsigned long long next(unsigned long long n) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (rng >> 33) % n;
}

static void check(char *err, const char *what) {
    if (err) {
        fprintf(stderr, "rocksdb_floor: %s: %s\n", what, err);
        exit(1);
    }
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "rocksdb_floor: out of memory\n");
        exit(1);
    }
    return p;
}

static uint64_t property(rocksdb_t *db, const char *name) {
    uint64_t v = 0;
    return rocksdb_property_int(db, name, &v) == 0 ? v : 0;
}

/* The ids of a batch, for sorting its indices by key (bytewise, as RocksDB orders keys). */
static char **sortIds;
static size_t *sortLens;
static int byKey(const void *a, const void *b) {
    long i = *(const long *)a, j = *(const long *)b;
    size_t n = sortLens[i] < sortLens[j] ? sortLens[i] : sortLens[j];
    int c = memcmp(sortIds[i], sortIds[j], n);
    if (c != 0) return c;
    return sortLens[i] < sortLens[j] ? -1 : sortLens[i] > sortLens[j];
}

/* Flush the memtable and wait until no flush or compaction is pending or running. */
static void settle(rocksdb_t *db) {
    char *err = NULL;
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    rocksdb_flushoptions_set_wait(fo, 1);
    rocksdb_flush(db, fo, &err);
    check(err, "flush");
    rocksdb_flushoptions_destroy(fo);
    while (property(db, "rocksdb.compaction-pending") || property(db, "rocksdb.num-running-compactions") ||
           property(db, "rocksdb.num-running-flushes") || property(db, "rocksdb.mem-table-flush-pending"))
        usleep(2000);
}

/* Loads ACCOUNTS keys with values of 90-110 bytes, then compacts them into a settled tree. */
static void load(rocksdb_t *db, long accounts) {
    char *err = NULL;
    double t0 = now(CLOCK_MONOTONIC);
    rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_disable_WAL(wo, 1);
    rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
    unsigned long long seed = 0x2545F4914F6CDD1DULL;
    for (long i = 0; i < accounts; i++) {
        char key[32], value[128];
        int keyLen = snprintf(key, sizeof key, "a%ld", i);
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t len = 90 + (seed >> 33) % 21;
        for (size_t j = 0; j < len; j++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            value[j] = (char)(seed >> 56);
        }
        rocksdb_writebatch_put(wb, key, keyLen, value, len);
        if (rocksdb_writebatch_count(wb) == 100000 || i == accounts - 1) {
            rocksdb_write(db, wo, wb, &err);
            check(err, "load");
            rocksdb_writebatch_clear(wb);
        }
    }
    rocksdb_writebatch_destroy(wb);
    rocksdb_writeoptions_destroy(wo);
    settle(db);
    rocksdb_compact_range(db, NULL, 0, NULL, 0);
    settle(db);
    fprintf(stderr, "rocksdb_floor: loaded %ld accounts in %.1f s\n", accounts, now(CLOCK_MONOTONIC) - t0);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: rocksdb_floor DIR ACCOUNTS COUNT [BATCH] [--multiget] [--no-wal] [--cache MIB]\n");
        return 2;
    }
    long accounts = atol(argv[2]), count = atol(argv[3]), batch = 51200, cacheMiB = 64;
    bool multiget = false, noWAL = false, sorted = false;
    for (int a = 4; a < argc; a++) {
        if (strcmp(argv[a], "--multiget") == 0) multiget = true;
        else if (strcmp(argv[a], "--no-wal") == 0) noWAL = true;
        else if (strcmp(argv[a], "--sorted") == 0) sorted = true;
        else if (strcmp(argv[a], "--cache") == 0 && a + 1 < argc) cacheMiB = atol(argv[++a]);
        else if (argv[a][0] != '-') batch = atol(argv[a]);
        else {
            fprintf(stderr, "rocksdb_floor: unknown option %s\n", argv[a]);
            return 2;
        }
    }
    if (accounts <= 0 || count <= 0 || batch <= 0 || cacheMiB <= 0) return 2;

    char **ids = xmalloc(sizeof(char *) * count);
    size_t *idLens = xmalloc(sizeof(size_t) * count);
    for (long i = 0; i < count; i++) {
        char id[32];
        idLens[i] = (size_t)snprintf(id, sizeof id, "a%llu", next((unsigned long long)accounts));
        ids[i] = strdup(id);
    }

    rocksdb_cache_t *cache = rocksdb_cache_create_lru((size_t)cacheMiB << 20);
    rocksdb_block_based_table_options_t *table = rocksdb_block_based_options_create();
    rocksdb_block_based_options_set_block_cache(table, cache);
    /* As the store: index and filter blocks stay with their table, not in the block cache. */
    rocksdb_block_based_options_set_cache_index_and_filter_blocks(table, 0);
    rocksdb_block_based_options_set_filter_policy(table, rocksdb_filterpolicy_create_bloom_full(10));
    /* As the store: a full key every 4 entries of a data block (RocksDB's default is 16). */
    rocksdb_block_based_options_set_block_restart_interval(table, 4);
    rocksdb_options_t *opt = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(opt, 1);
    rocksdb_options_set_block_based_table_factory(opt, table);
    rocksdb_options_set_write_buffer_size(opt, 32 << 20);
    rocksdb_options_set_max_write_buffer_number(opt, 2);
    rocksdb_options_set_compression(opt, rocksdb_no_compression);
    rocksdb_options_set_max_background_jobs(opt, 2);
    /* As the store: universal compaction (size amplification 100%, 8 runs before a merge)
       and a Bloom filter over each memtable's keys. */
    rocksdb_options_set_compaction_style(opt, rocksdb_universal_compaction);
    rocksdb_universal_compaction_options_t *universal = rocksdb_universal_compaction_options_create();
    rocksdb_universal_compaction_options_set_max_size_amplification_percent(universal, 100);
    rocksdb_options_set_universal_compaction_options(opt, universal);
    rocksdb_universal_compaction_options_destroy(universal);
    rocksdb_options_set_level0_file_num_compaction_trigger(opt, 8);
    rocksdb_options_set_memtable_prefix_bloom_size_ratio(opt, 0.02);
    rocksdb_options_set_memtable_whole_key_filtering(opt, 1);
    char *err = NULL;
    const char *cfNames[] = {"default"};
    const rocksdb_options_t *cfOptions[] = {opt};
    rocksdb_column_family_handle_t *cf;
    rocksdb_t *db = rocksdb_open_column_families(opt, argv[1], 1, cfNames, cfOptions, &cf, &err);
    check(err, "open");
    if (property(db, "rocksdb.estimate-num-keys") == 0) load(db, accounts);

    rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
    rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
    if (noWAL) rocksdb_writeoptions_disable_WAL(wo, 1);
    else rocksdb_writeoptions_set_sync(wo, 1);
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    rocksdb_flushoptions_set_wait(fo, 1);
    rocksdb_writebatch_t *wb = rocksdb_writebatch_create();

    char **data = calloc(batch, sizeof(char *));
    long *order = calloc(batch, sizeof(long));
    size_t *dataLen = calloc(batch, sizeof(size_t));
    rocksdb_pinnableslice_t **slices = calloc(MULTIGET_CHUNK, sizeof(rocksdb_pinnableslice_t *));
    char **errs = calloc(MULTIGET_CHUNK, sizeof(char *));
    if (!data || !dataLen || !slices || !errs || !order) return 1;
    double readCPU = 0, writeCPU = 0, commitCPU = 0, readWall = 0, writeWall = 0, commitWall = 0;
    long found = 0;
    double p0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
    for (long b = 0; b < count; b += batch) {
        long n = b + batch < count ? batch : count - b;
        char **part = ids + b;
        size_t *partLens = idLens + b;
        double c0 = now(CLOCK_THREAD_CPUTIME_ID), t0 = now(CLOCK_MONOTONIC);
        if (multiget) {
            for (long k = 0; k < n; k += MULTIGET_CHUNK) {
                long m = k + MULTIGET_CHUNK < n ? MULTIGET_CHUNK : n - k;
                rocksdb_batched_multi_get_cf(db, ro, cf, (size_t)m, (const char *const *)part + k, partLens + k,
                                             slices, errs, false);
                for (long i = 0; i < m; i++) {
                    check(errs[i], "MultiGet");
                    data[k + i] = NULL;
                    if (!slices[i]) continue;
                    size_t len;
                    const char *v = rocksdb_pinnableslice_value(slices[i], &len);
                    if (v) {
                        data[k + i] = xmalloc(len);
                        memcpy(data[k + i], v, len);
                        dataLen[k + i] = len;
                        found++;
                    }
                    rocksdb_pinnableslice_destroy(slices[i]);
                }
            }
        } else {
            for (long i = 0; i < n; i++) {
                data[i] = NULL;
                rocksdb_pinnableslice_t *s = rocksdb_get_pinned_cf(db, ro, cf, part[i], partLens[i], &err);
                check(err, "Get");
                if (!s) continue;
                size_t len;
                const char *v = rocksdb_pinnableslice_value(s, &len);
                if (v) {
                    data[i] = xmalloc(len);
                    memcpy(data[i], v, len);
                    dataLen[i] = len;
                    found++;
                }
                rocksdb_pinnableslice_destroy(s);
            }
        }
        double c1 = now(CLOCK_THREAD_CPUTIME_ID), t1 = now(CLOCK_MONOTONIC);
        for (long i = 0; i < n; i++) order[i] = i;
        if (sorted) {
            sortIds = part, sortLens = partLens;
            qsort(order, (size_t)n, sizeof(long), byKey);
        }
        for (long k = 0; k < n; k++) {
            long i = order[k];
            if (!data[i]) continue;
            if (sorted && k > 0 && byKey(&order[k - 1], &i) == 0) continue;
            data[i][0] ^= 1;
            rocksdb_writebatch_put_cf(wb, cf, part[i], partLens[i], data[i], dataLen[i]);
        }
        double c2 = now(CLOCK_THREAD_CPUTIME_ID), t2 = now(CLOCK_MONOTONIC);
        rocksdb_write(db, wo, wb, &err);
        check(err, "write");
        if (noWAL) {
            rocksdb_flush_cf(db, fo, cf, &err);
            check(err, "flush");
        }
        rocksdb_writebatch_clear(wb);
        double c3 = now(CLOCK_THREAD_CPUTIME_ID), t3 = now(CLOCK_MONOTONIC);
        readCPU += c1 - c0, writeCPU += c2 - c1, commitCPU += c3 - c2;
        readWall += t1 - t0, writeWall += t2 - t1, commitWall += t3 - t2;
        for (long i = 0; i < n; i++) free(data[i]), data[i] = NULL;
    }
    /* The deferred work of the writes: the memtable's flush and the compactions it starts. */
    settle(db);
    double totalCPU = now(CLOCK_PROCESS_CPUTIME_ID) - p0, totalWall = now(CLOCK_MONOTONIC) - w0;
    double background = totalCPU - readCPU - writeCPU - commitCPU;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("rocksdb floor (%s, %s%s, %ld of %ld accounts, %ld a commit, %ld MiB cache): CPU per account: read %.1f us, "
           "WriteBatch %.1f us, commit %.1f us, background %.1f us, total %.1f us (wall: %.1f, %.1f, %.1f; all %.1f "
           "us); peak RSS %ld MiB\n",
           multiget ? "MultiGet" : "Get", noWAL ? "WAL off + flush" : "WAL synced", sorted ? ", sorted" : "", found, count, batch, cacheMiB,
           readCPU * 1e6 / count, writeCPU * 1e6 / count, commitCPU * 1e6 / count, background * 1e6 / count,
           totalCPU * 1e6 / count, readWall * 1e6 / count, writeWall * 1e6 / count, commitWall * 1e6 / count,
           totalWall * 1e6 / count, ru.ru_maxrss / 1024);

    for (long i = 0; i < count; i++) free(ids[i]);
    free(ids), free(idLens), free(data), free(dataLen), free(slices), free(errs), free(order);
    rocksdb_writebatch_destroy(wb);
    rocksdb_flushoptions_destroy(fo);
    rocksdb_writeoptions_destroy(wo);
    rocksdb_readoptions_destroy(ro);
    rocksdb_column_family_handle_destroy(cf);
    rocksdb_close(db);
    rocksdb_options_destroy(opt);
    rocksdb_block_based_options_destroy(table);
    rocksdb_cache_destroy(cache);
    return 0;
}
