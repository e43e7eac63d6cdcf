// The sm90 persistent tile scheduler (sm90_scheduler.cuh), compiled for the host: every CTA's walk, with the
// split-K bookkeeping that advance() keeps without divisions, against the definition (unit u = tile * splits +
// split), the k-step partition of each tile's splits, and every output tile visited exactly once per split.
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <map>
#include <random>
#include <tuple>
#include <vector>

// The header is device code; its arithmetic is plain C++ once __device__ means nothing and `min` is in scope.
#define __device__
namespace tgemm::sm90 {
inline uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }
}  // namespace tgemm::sm90
#include "backends/sm90/sm90_scheduler.cuh"
#undef __device__

namespace tgemm::sm90 {
namespace {

template <bool SK>
void check_walk(uint32_t m, uint32_t n, uint32_t clusters, uint32_t num_k, uint32_t splits) {
  constexpr int BM = 64, BN = 256;
  using S = TileScheduler<BM, BN, 1, 1, SK>;
  const uint32_t tiles = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
  const uint32_t sp = SK ? splits : 1;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, int> seen;  // (m_block, n_block, split) -> visits
  std::map<uint32_t, std::vector<std::pair<uint32_t, uint32_t>>> ranges;  // tile -> k-ranges of its splits
  for (uint32_t c = 0; c < clusters; ++c) {
    S sched(m, n, c, clusters, num_k, splits);
    for (uint32_t u = c; sched.valid(); sched.advance(), u += clusters) {
      ASSERT_EQ(sched.linear, u);
      ASSERT_EQ(sched.tile(), u / sp) << "unit " << u;
      ASSERT_EQ(sched.split(), u % sp) << "unit " << u;
      uint32_t mb, nb, kb, ke;
      sched.block(0, 0, mb, nb);
      sched.k_range(kb, ke);
      ASSERT_LT(mb, (m + BM - 1) / BM);
      ASSERT_LT(nb, (n + BN - 1) / BN);
      ++seen[{mb, nb, sched.split()}];
      ranges[sched.tile()].push_back({kb, ke});
    }
  }
  ASSERT_EQ(seen.size(), size_t(tiles) * sp) << m << "x" << n << " on " << clusters << ", splits " << sp;
  for (const auto& [key, visits] : seen) ASSERT_EQ(visits, 1);
  for (auto& [tile, rs] : ranges) {
    std::sort(rs.begin(), rs.end());
    ASSERT_EQ(rs.size(), sp);
    uint32_t next = 0;
    for (auto [kb, ke] : rs) {
      ASSERT_EQ(kb, next) << "tile " << tile << ": the splits leave a gap or overlap";
      ASSERT_GE(ke - kb, num_k / sp);
      ASSERT_LE(ke - kb, num_k / sp + 1);
      if (sp <= num_k) ASSERT_GT(ke, kb) << "every split has a k-step (the first initialises the accumulators)";
      next = ke;
    }
    ASSERT_EQ(next, num_k);
  }
}

TEST(Sm90Scheduler, SeedShapeOn132Sms) {
  check_walk<false>(8192, 6144, 132, 20, 1);
  check_walk<true>(8192, 6144, 132, 20, 1);
  check_walk<true>(8192, 6144, 132, 20, 3);
}

TEST(Sm90Scheduler, SplitKBookkeepingMatchesTheDefinition) {
  std::mt19937 rng(14);
  for (int i = 0; i < 300; ++i) {
    const uint32_t m = 1 + rng() % 3000, n = 1 + rng() % 3000, clusters = 1 + rng() % 140;
    const uint32_t num_k = 1 + rng() % 200, splits = 1 + rng() % std::min<uint32_t>(num_k, 12);
    check_walk<true>(m, n, clusters, num_k, splits);
    check_walk<false>(m, n, clusters, num_k, splits);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace tgemm::sm90
