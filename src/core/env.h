// A/B switches of the launch paths, read from the environment once by each caller (a static).
#pragma once

#include <cstdlib>
#include <vector>

namespace tgemm {

// On unless `name` is set to a value starting with '0' (TGEMM_TMA_CACHE=0, TGEMM_SKINNY_PDL=0, ...).
inline bool env_switch(const char* name) {
  const char* e = std::getenv(name);
  return !(e && e[0] == '0');
}

// The integer value of `name` (std::atoi: 0 for text that is not a number), or `fallback` where it is unset or empty
// (TGEMM_SKINNY_WS_STAGES=n, ...).
inline int env_int(const char* name, int fallback) {
  const char* e = std::getenv(name);
  return e && *e ? std::atoi(e) : fallback;
}

// The integers of `name`, separated by ',' or ':' (TGEMM_SM90_L2_TWINS=1,3 or 1:3, the form a device_run.sh probe
// variant can carry); empty where it is unset.
inline std::vector<int> env_int_list(const char* name) {
  std::vector<int> out;
  const char* e = std::getenv(name);
  while (e && *e) {
    char* end = nullptr;
    const long v = std::strtol(e, &end, 10);
    if (end == e) break;  // not a number: stop
    out.push_back(int(v));
    e = *end == ',' || *end == ':' ? end + 1 : end;
  }
  return out;
}

}  // namespace tgemm
