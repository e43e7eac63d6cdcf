// The seed incident's problem (N = 6144, K = 1280, bias, dense leading dimensions) at a given M.
#pragma once

#include "tgemm/kernel.h"

namespace tgemm::testing {

inline Problem seed_problem(int64_t m) {
  Problem p;
  p.m = m, p.n = 6144, p.k = 1280, p.ldx = 1280, p.ldw = 1280, p.ldy = 6144, p.has_bias = true;
  return p;
}

}  // namespace tgemm::testing
