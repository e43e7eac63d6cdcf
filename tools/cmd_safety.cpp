// tgemm repro, tgemm check: the seed incident on this GPU, and the boundary sweep of every declared limit.
#include <cstdio>

#include "cli.h"

namespace tgemm::cli {

int cmd_repro(const std::vector<std::string>&) {
  std::fprintf(stderr, "tgemm repro: not built yet (issue 6)\n");
  return 2;
}

int cmd_check(const std::vector<std::string>&) {
  std::fprintf(stderr, "tgemm check: not built yet (issue 6)\n");
  return 2;
}

}  // namespace tgemm::cli
