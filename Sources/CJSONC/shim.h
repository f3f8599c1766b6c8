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

/// The hash json-c's object tables give `key`. Every object table uses the same string
/// hash with one process-wide seed, so a hash computed once stays valid for every object.
static inline unsigned long badgeflow_key_hash(const char *key) {
    json_object *probe = json_object_new_object();
    if (probe == NULL) return 0;
    unsigned long hash = lh_get_hash(json_object_get_object(probe), key);
    json_object_put(probe);
    return hash;
}

/// The member `key` (json-c hash `hash`) of `obj`: 1 and its value (NULL for a JSON null)
/// when `obj` is an object that has the key; 0 when it is not an object or has no such key.
/// One call per pointer step: the type test and the lookup together.
static inline int badgeflow_member_hashed(json_object *obj, const char *key, unsigned long hash,
                                          json_object **value) {
    if (!json_object_is_type(obj, json_type_object)) return 0;
    struct lh_entry *entry = lh_table_lookup_entry_w_hash(json_object_get_object(obj), key, hash);
    if (entry == NULL) return 0;
    *value = (json_object *)lh_entry_v(entry);
    return 1;
}

#endif
