#ifndef BADGEFLOW_CJSONC_SHIM_H
#define BADGEFLOW_CJSONC_SHIM_H
#include <json-c/json.h>
#include <locale.h>

/// json-c switches the thread to the "C" numeric locale around every parse
/// (duplocale + newlocale + uselocale, which take a process-wide lock). When the thread
/// already runs in a private C locale, that switch is cheaper and does not contend across
/// threads. Returns 0 on success.
static inline int badgeflow_use_c_locale(void) {
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (c == (locale_t)0) return -1;
    uselocale(c);
    return 0;
}
#endif
