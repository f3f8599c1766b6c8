#ifndef BADGEFLOW_CJSONC_SHIM_H
#define BADGEFLOW_CJSONC_SHIM_H
#include <json-c/json.h>
#endif
