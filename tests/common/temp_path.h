// A file name in the system temp folder that no other test process uses: the CPU suite runs in several builds
// (plain, ASan, TSan) and a developer's run may overlap CI's, and a shared fixed name let one process delete or
// rewrite another's table mid-test (PlanCache.ReloadTablesWhileServing: "cannot read tuned table", session 14).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace tgemm::testing {

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tgemm_" + std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace tgemm::testing
