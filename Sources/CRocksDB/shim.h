#ifndef BADGEFLOW_CROCKSDB_SHIM_H
#define BADGEFLOW_CROCKSDB_SHIM_H
#include <rocksdb/c.h>
#endif
