// A/B switches of the launch paths, read from the environment once by each caller (a static).
#pragma once

#include <cstdlib>

namespace tgemm {

// On unless `name` is set to a value starting with '0' (TGEMM_TMA_CACHE=0, TGEMM_SKINNY_PDL=0, ...).
inline bool env_switch(const char* name) {
  const char* e = std::getenv(name);
  return !(e && e[0] == '0');
}

}  // namespace tgemm
