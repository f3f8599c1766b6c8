// mimalloc (Debian: libmimalloc-dev), linked into the badgeflow executable only.
//
// Linking libmimalloc.so replaces malloc/free for the whole process, json-c included:
// json-c allocates and frees every key, string and hash table of every parsed line, and
// the filter's worker threads hand results to the applying thread, which frees them.
// mimalloc's per-thread heaps make both cheaper than glibc's arenas (BuildingAndTesting.md, "The allocator").
#include <mimalloc.h>
