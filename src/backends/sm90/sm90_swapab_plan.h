// Host side of the sm90 swap-AB kernels that needs no CUDA: how many CTAs of a cluster split a problem's K.
// Plain C++ so that the CPU tests check it (tests/cpu/test_sm90_swapab.cpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "tgemm/kernel.h"

namespace tgemm::sm90 {

// Split count for a problem, in k-steps of one CTA: a wave of CTAs costs its k-steps per CTA plus a fixed start
// (pipeline fill, ~4 k-steps) and, split, the cluster reduction (~2). `concurrent[i]`: CTAs resident with clusters
// of 2^i (1 and 2). A pure function of the problem and the device, so a problem always gets the same bits.
// Clusters of 4 and 8 measured 1.3-2x slower than 2 on every shape of run 43 (K scaling at 32 and 256 x 4096), so
// the automatic choice stops at 2.
inline uint32_t choose_swapab_splits(const Problem& p, int mt, int wrows, const std::array<int, 2>& concurrent) {
  const uint64_t tiles = ((uint64_t(p.n) + wrows - 1) / wrows) * ((uint64_t(p.m) + mt - 1) / mt);
  const uint64_t nk = (uint64_t(p.k) + 63) / 64;
  uint32_t best = 1;
  double best_cost = 0;
  for (uint32_t i = 0; i < 2; ++i) {
    const uint32_t s = 1u << i;
    if (s > 1 && nk / s < 4) break;  // at least 4 k-steps per split
    const double conc = std::max(1, concurrent[i]);
    const double waves = std::ceil(double(tiles * s) / conc);
    const double cost = waves * (std::ceil(double(nk) / s) + 4.0 + (s > 1 ? 2.0 : 0.0));
    if (i == 0 || cost < 0.97 * best_cost) {
      best = s;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace tgemm::sm90
