#ifndef BADGEFLOW_CCRYPTO_SHIM_H
#define BADGEFLOW_CCRYPTO_SHIM_H
// OpenSSL's libcrypto, for one function: the one-shot SHA-256 (`SHA256`, not deprecated in
// OpenSSL 3), which picks the CPU's SHA extensions when it has them. Only
// Sources/BadgeFlow/State/SHA256+Unsafe.swift uses it.
#include <openssl/sha.h>
#endif
