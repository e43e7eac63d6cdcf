// A/B switches of the launch paths, read from the environment once by each caller (a static).
#pragma once

#include <cstdlib>

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

}  // namespace tgemm
