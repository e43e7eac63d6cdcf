// A Problem of M x N x K with every other field at its default, for the CPU tests of the host-side plans.
#pragma once

#include <cstdint>

#include "tgemm/kernel.h"

namespace tgemm::testing {

inline Problem problem_mnk(int64_t m, int64_t n, int64_t k) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

}  // namespace tgemm::testing
