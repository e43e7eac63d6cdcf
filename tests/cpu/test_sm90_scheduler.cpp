// The sm90 persistent tile scheduler (sm90_scheduler.cuh), compiled for the host: every CTA's walk, with the
// split-K bookkeeping that advance() keeps without divisions, against the definition (split units first: unit u =
// split_index * splits + split, then the head tiles whole), the k-step partition of each tile's splits, and every
// output tile visited exactly once per split.
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

// split_tiles: how many of the last tiles are split (launch clamps it to [0, tiles], and to 0 without a split).
template <bool SK>
void check_walk(uint32_t m, uint32_t n, uint32_t clusters, uint32_t num_k, uint32_t splits, uint32_t split_tiles) {
  constexpr int BM = 64, BN = 256;
  using S = TileScheduler<BM, BN, 1, 1, SK>;
  const uint32_t tiles = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
  const uint32_t sp = SK ? splits : 1;
  const uint32_t st = sp > 1 ? std::min(split_tiles, tiles) : 0;
  const uint32_t head = tiles - st, sk_units = st * sp;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, int> seen;  // (m_block, n_block, split) -> visits
  std::map<uint32_t, std::vector<std::pair<uint32_t, uint32_t>>> ranges;  // tile -> k-ranges of its splits
  uint32_t units = 0;
  for (uint32_t c = 0; c < clusters; ++c) {
    S sched(m, n, c, clusters, num_k, splits, st);
    for (uint32_t u = c; sched.valid(); sched.advance(), u += clusters) {
      ++units;
      ASSERT_EQ(sched.linear, u);
      const bool split = u < sk_units;
      ASSERT_EQ(sched.split_unit(), split) << "unit " << u;
      ASSERT_EQ(sched.tile(), split ? head + u / sp : u - sk_units) << "unit " << u;
      ASSERT_EQ(sched.split(), split ? u % sp : 0u) << "unit " << u;
      if (split) ASSERT_EQ(sched.split_index(), u / sp) << "unit " << u;
      uint32_t mb, nb, kb, ke;
      sched.block(0, 0, mb, nb);
      sched.k_range(kb, ke);
      ASSERT_LT(mb, (m + BM - 1) / BM);
      ASSERT_LT(nb, (n + BN - 1) / BN);
      ++seen[{mb, nb, sched.split()}];
      ranges[sched.tile()].push_back({kb, ke});
    }
  }
  ASSERT_EQ(units, head + sk_units) << m << "x" << n << " on " << clusters;
  ASSERT_EQ(seen.size(), size_t(head) + size_t(st) * sp) << m << "x" << n << " on " << clusters << ", splits " << sp;
  for (const auto& [key, visits] : seen) ASSERT_EQ(visits, 1);
  ASSERT_EQ(ranges.size(), size_t(tiles));
  for (auto& [tile, rs] : ranges) {
    const uint32_t tsp = tile >= head ? sp : 1;
    std::sort(rs.begin(), rs.end());
    ASSERT_EQ(rs.size(), tsp) << "tile " << tile;
    uint32_t next = 0;
    for (auto [kb, ke] : rs) {
      ASSERT_EQ(kb, next) << "tile " << tile << ": the splits leave a gap or overlap";
      ASSERT_GE(ke - kb, num_k / tsp);
      ASSERT_LE(ke - kb, num_k / tsp + 1);
      if (tsp <= num_k) ASSERT_GT(ke, kb) << "every split has a k-step (the first initialises the accumulators)";
      next = ke;
    }
    ASSERT_EQ(next, num_k);
  }
}

TEST(Sm90Scheduler, SeedShapeOn132Sms) {
  check_walk<false>(8192, 6144, 132, 20, 1, 0);
  check_walk<true>(8192, 6144, 132, 20, 1, 0);
  check_walk<true>(8192, 6144, 132, 20, 3, 3072);
  check_walk<true>(8192, 6144, 132, 20, 3, 36);  // the stream-K tail: 23 rounds of 132 tiles + 36 split 3 ways
}

// Split units come first: with a tail of t tiles split s ways (t * s <= CTAs), every CTA runs the same number of
// whole tiles and at most one split unit.
TEST(Sm90Scheduler, TailSplitUnitsRunFirstAndEvenOut) {
  using S = TileScheduler<64, 256, 1, 1, true>;
  const uint32_t clusters = 132, splits = 3, st = 36;  // 3072 tiles of 8192 x 6144
  for (uint32_t c = 0; c < clusters; ++c) {
    S sched(8192, 6144, c, clusters, 20, splits, st);
    uint32_t whole = 0, split = 0;
    for (bool first = true; sched.valid(); sched.advance(), first = false) {
      if (sched.split_unit()) {
        EXPECT_TRUE(first) << "CTA " << c << ": a split unit after a whole tile";
        ++split;
      } else {
        ++whole;
      }
    }
    EXPECT_EQ(whole, 23u) << "CTA " << c;
    EXPECT_EQ(split, c < st * splits ? 1u : 0u) << "CTA " << c;
  }
}

// The column tail's walk against its definition: unit u < head is tile u whole; unit head + 2 i + h is column half
// h of tile head + i, over all of K. Every (tile, half) once, every whole tile once, no k-range split.
void check_column_walk(uint32_t m, uint32_t n, uint32_t clusters, uint32_t num_k, uint32_t split_tiles) {
  constexpr int BM = 64, BN = 256;
  using S = TileScheduler<BM, BN, 1, 1, true>;
  const uint32_t tiles = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
  const uint32_t st = std::min(split_tiles, tiles), head = tiles - st;
  std::map<std::pair<uint32_t, uint32_t>, int> seen;  // (tile, first column in the tile) -> visits
  uint32_t units = 0;
  for (uint32_t c = 0; c < clusters; ++c) {
    S sched(m, n, c, clusters, num_k, 2, st, true);
    for (uint32_t u = c; sched.valid(); sched.advance(), u += clusters) {
      ++units;
      const bool half = u >= head;
      ASSERT_EQ(sched.column_unit(), half) << "unit " << u;
      ASSERT_FALSE(sched.split_unit()) << "unit " << u;
      ASSERT_EQ(sched.tile(), half ? head + (u - head) / 2 : u) << "unit " << u;
      ASSERT_EQ(sched.column_offset(), half ? (u - head) % 2 * (BN / 2) : 0u) << "unit " << u;
      uint32_t kb, ke;
      sched.k_range(kb, ke);
      ASSERT_EQ(kb, 0u);
      ASSERT_EQ(ke, num_k);
      ++seen[{sched.tile(), sched.column_offset()}];
    }
  }
  ASSERT_EQ(units, head + 2 * st) << m << "x" << n << " on " << clusters;
  ASSERT_EQ(seen.size(), size_t(head) + 2 * size_t(st));
  for (const auto& [key, visits] : seen) ASSERT_EQ(visits, 1);
}

TEST(Sm90Scheduler, ColumnTailWalk) {
  check_column_walk(8192, 6144, 132, 20, 36);  // 23 rounds of 132 tiles, then 36 tiles as 72 halves
  check_column_walk(8192, 6144, 132, 20, 3072);
  check_column_walk(333, 1032, 132, 33, 30);
  std::mt19937 rng(16);
  for (int i = 0; i < 300; ++i) {
    const uint32_t m = 1 + rng() % 3000, n = 1 + rng() % 3000, clusters = 1 + rng() % 140;
    const uint32_t tiles = ((m + 63) / 64) * ((n + 255) / 256);
    check_column_walk(m, n, clusters, 1 + rng() % 100, uint32_t(rng() % (tiles + 1)));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// With 36 tiles left over 23 rounds on 132 CTAs, CTAs 0-71 run 23 whole tiles and then one half, the others 23 whole.
TEST(Sm90Scheduler, ColumnTailHalvesRunLastAndEvenOut) {
  using S = TileScheduler<64, 256, 1, 1, true>;
  for (uint32_t c = 0; c < 132; ++c) {
    S sched(8192, 6144, c, 132, 20, 2, 36, true);
    uint32_t whole = 0, halves = 0;
    for (; sched.valid(); sched.advance()) {
      if (sched.column_unit()) {
        ++halves;
      } else {
        EXPECT_EQ(halves, 0u) << "CTA " << c << ": a whole tile after a half";
        ++whole;
      }
    }
    EXPECT_EQ(whole, 23u) << "CTA " << c;
    EXPECT_EQ(halves, c < 72 ? 1u : 0u) << "CTA " << c;
  }
}

TEST(Sm90Scheduler, SplitKBookkeepingMatchesTheDefinition) {
  std::mt19937 rng(14);
  for (int i = 0; i < 400; ++i) {
    const uint32_t m = 1 + rng() % 3000, n = 1 + rng() % 3000, clusters = 1 + rng() % 140;
    const uint32_t num_k = 1 + rng() % 200, splits = 1 + rng() % std::min<uint32_t>(num_k, 12);
    const uint32_t tiles = ((m + 63) / 64) * ((n + 255) / 256);
    const uint32_t split_tiles = i % 3 == 0 ? tiles : uint32_t(rng() % (tiles + 2));
    check_walk<true>(m, n, clusters, num_k, splits, split_tiles);
    check_walk<false>(m, n, clusters, num_k, splits, split_tiles);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace tgemm::sm90
