// tgemm tune: time every candidate for each shape, keep the fastest that passes the error check.
#include <cstdio>

#include "cli.h"

namespace tgemm::cli {

int cmd_tune(const std::vector<std::string>&) {
  std::fprintf(stderr, "tgemm tune: not built yet (issue 5)\n");
  return 2;
}

}  // namespace tgemm::cli
