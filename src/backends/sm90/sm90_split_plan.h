// Host side of the sm90 split-K configurations that needs no CUDA: how a problem's K is split (every tile, a
// stream-K tail of them, or none) and the workspace that takes. Plain C++ so that the CPU tests check it
// (tests/cpu/test_sm90_split_plan.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <climits>
#include <cstdint>
#include <string>

#include "tgemm/kernel.h"

namespace tgemm::sm90 {

// How a split-K configuration divides a problem's K: `splits` k-ranges for each of the last `split_tiles` output
// tiles (in the scheduler's order; kAllTiles: every tile), the other tiles whole. Splitting all tiles fills the SMs
// where the tiles are few; splitting only the tiles of a partial last round (a stream-K tail) balances the rounds
// where they are many. The swap-AB kernels split every tile across a cluster.
//
// by_columns: the split tiles are divided into `splits` = kColumnParts column parts of BN / 2 (each over all of K)
// instead of k-ranges, walked after the whole tiles: no partials, no workspace. Only kernels whose Traits::kColumnTail
// is set run it.
struct SplitPlan {
  static constexpr uint32_t kAllTiles = UINT32_MAX;
  uint32_t splits = 1;
  uint32_t split_tiles = kAllTiles;
  bool by_columns = false;
};
inline constexpr uint32_t kColumnParts = 2;

// Output tiles of a bm x bn tiling of `p`.
inline uint64_t tile_count(int bm, int bn, const Problem& p) {
  return ((uint64_t(p.m) + bm - 1) / bm) * ((uint64_t(p.n) + bn - 1) / bn);
}

// Split-K cost model, in k-steps of one tile on one SM: a persistent CTA runs its units one after another, so a
// split count s costs ceil(units / sms) rounds of (k-steps per unit + kUnitFixed), plus, with s > 1, kSplitUnit per
// unit for the partials (write one fp32 tile, fence, count in, the last reads all s). kSplitUnit is fitted to run 6
// (scripts/dev/SM90_NOTES.md): 12-34 k-steps of a 64x256 tile (5-10 us) per unit on 2048/4096 x 1280 at K = 1280
// and 8192; with it no shape of the suites with M >= 2048 splits, and small-M shapes with long K (a handful of
// tiles) do. Run 80 (session 9, TGEMM_SM90_SPLITS forced, 18 shapes with M = 128-1024 and few tiles): without the
// counter memset splitting pays at some (128x1280x8192 42.3 us unsplit, 19.5 with 4 splits; 256x1280x8192 42.3 /
// 20.6; 1024x1024x4096 24.6 / 20.1 with 2) and still loses at most, and the best split count stays behind
// cuBLASLt there (11.0, 14.5, 15.0 us: 1.3-1.8x); the model was left as it is.
//
// Where no split of every tile pays, a stream-K tail may: with R full rounds of tiles and t <= sms / 2 tiles left
// for a partial last round, those t tiles are split s = sms / t ways and run first, so every CTA runs R whole tiles
// plus at most one split unit (R + 1 / s tiles' time instead of R + 1). Run first, a split unit's partial-tile
// traffic overlaps the CTA's next tile's main loop in the other consumer warpgroup, if that main loop is long enough:
// run 132 (22 shapes, the 64x256 tail against its unsplit twin in one process) measured gains on every shape with
// K >= 3584 (+2.2-2.8% at 23-31 rounds, +2.9-36% at 1-4 rounds: 2048 x 3584 x 18944 0.99 -> 1.11x cuBLASLt,
// 512 x 4608 x 3584 0.61 -> 0.76x) and losses on every one with K <= 1280 (-1 to -3% at 8192 x 6144 x 1280, -5 to
// -14% at 1-2 rounds). There the kernel itself ran 2-15% longer under Nsight Compute with 14-32% more L2 sector
// traffic, its consumers waiting longer for their loads; the partials' own instructions took few stall samples
// (runs 133-136), so a k-range tail needs kMinKStepsTail k-steps per tile.
//
// A column tail (`column_tail`: the kernel can run one) needs no k-steps: the tiles of a last round at most half
// full are each run as two column halves (BN / 2 wide, all of K), after the whole tiles, so the last round takes
// about half a tile's time. Nothing is reduced, so nothing waits on L2 traffic. Against the unsplit twin in one
// process (runs 144 and 146): 8192 x 6144 x 1280 +1.1-2.1%, 4096 x 3840 x 1280 +1-6%, 1024 x 5120 x 1280 +5-13%; at
// 23-31 rounds with 4-36 tiles left, ~0.7% below the model with kColumnUnit = 1 (31 rounds + 4 tiles: -1 to +0.3%),
// hence kColumnUnit = 3 k-steps for the halves' N = BN / 2 wgmma and their own fixed cost.
//
// Where both apply, the model picks. A k-range tail saves 1 - 1 / s of a round, a column tail half of one; the k-range
// tail's kTailSplitUnit (what its partials leave on the critical path) is fitted to run 146, where each kernel ran
// with either tail in one process: the column tail ahead at 8192 x 6144 x 4096 (s = 3; 64x256 +2.3%, 128x128 +6%),
// the k-range tail ahead by 1-2% for 64x256 at K = 8192-18944 (s = 6). kTailSplitUnit = 20 k-steps puts the first
// on the column side and the second on the k-range side.
struct SplitChoice {
  uint32_t splits = 1;
  uint32_t split_tiles = SplitPlan::kAllTiles;
  double eff = 1;  // tensor-core time of the ideal spread over every SM / modelled time
  bool by_columns = false;
};
inline constexpr uint32_t kMaxSplits = 8;
inline constexpr uint32_t kMinKStepsPerSplit = 8;
inline constexpr uint32_t kMinKStepsPerTailSplit = 4;
inline constexpr int kMinKStepsTail = 48;
// `tail_min_ksteps`: a k-range tail needs that many k-steps per tile; negative: none (a column tail may still be).
// `column_tail`: the kernel can run a column tail (Traits::kColumnTail).
inline SplitChoice choose_splits(int bm, int bn, const Problem& p, int sms, int tail_min_ksteps = kMinKStepsTail,
                                 bool column_tail = false) {
  const uint64_t tiles_u = tile_count(bm, bn, p);
  const double tiles = double(tiles_u);
  const uint64_t nk = (uint64_t(p.k) + 63) / 64;
  constexpr double kUnitFixed = 2, kSplitUnit = 24, kTailSplitUnit = 20, kColumnUnit = 3;
  auto cost = [&](uint32_t s) {
    const double rounds = std::ceil(tiles * s / sms);
    const double per = double((nk + s - 1) / s) + kUnitFixed + (s > 1 ? kSplitUnit : 0.0);
    return rounds * per;
  };
  const double ideal = tiles * double(nk + kUnitFixed) / sms;
  SplitChoice best{1, SplitPlan::kAllTiles, ideal / cost(1)};
  // Splitting must win clearly: the model ignores the counter memset and the partials' L2 footprint.
  for (uint32_t s = 2; s <= kMaxSplits && nk / s >= kMinKStepsPerSplit && tiles * s <= double(INT32_MAX); ++s) {
    const double e = ideal / cost(s);
    if (e > best.eff * (best.splits == 1 ? 1.08 : 1.0)) best = {s, SplitPlan::kAllTiles, e};
  }
  if (best.splits > 1 || sms <= 0) return best;
  const uint64_t rounds = tiles_u / uint64_t(sms), left = tiles_u % uint64_t(sms);
  if (left == 0 || 2 * left > uint64_t(sms)) return best;
  // The better of the two tails by the model, if it gains 1%. Both run `rounds` rounds of whole tiles first.
  const double whole = double(rounds) * double(nk + kUnitFixed);
  SplitChoice tail = best;
  if (rounds > 0 && tail_min_ksteps >= 0 && nk >= uint64_t(tail_min_ksteps)) {
    const uint32_t s = uint32_t(std::min<uint64_t>({uint64_t(sms) / left, kMaxSplits, nk / kMinKStepsPerTailSplit}));
    if (s >= 2 && tiles_u + uint64_t(left) * (s - 1) <= uint64_t(INT32_MAX)) {
      const double t = whole + double((nk + s - 1) / s) + kUnitFixed + kTailSplitUnit;
      tail = {s, uint32_t(left), ideal / t};
    }
  }
  if (column_tail && tiles_u + left <= uint64_t(INT32_MAX)) {
    const double t = whole + double(nk) / kColumnParts + kUnitFixed + kColumnUnit;
    if (ideal / t > tail.eff) tail = {kColumnParts, uint32_t(left), ideal / t, true};
  }
  return tail.eff > best.eff * 1.01 ? tail : best;
}

// The plan a launch runs: the split count within [1, k-steps], the split tiles within [0, tiles] (0 unsplit).
// A column plan always has kColumnParts parts.
inline SplitPlan clamp_plan(SplitPlan plan, uint64_t tiles, uint64_t num_k) {
  plan.splits =
      plan.by_columns ? kColumnParts : uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(plan.splits, num_k)));
  plan.split_tiles = plan.splits > 1 ? uint32_t(std::min<uint64_t>(plan.split_tiles, tiles)) : 0u;
  return plan;
}

// A plan in words (Kernel::describe_run): how the tiles of a bm x bn tiling of `p` are divided.
inline std::string describe_split_plan(int bm, int bn, const Problem& p, SplitPlan plan) {
  const uint64_t tiles = tile_count(bm, bn, p);
  plan = clamp_plan(plan, tiles, (uint64_t(p.k) + 63) / 64);
  const std::string of = std::to_string(tiles) + " tiles of " + std::to_string(bm) + "x" + std::to_string(bn);
  if (plan.splits <= 1 || plan.split_tiles == 0) return of + ", none split";
  const std::string which = plan.split_tiles == tiles ? "every one of " + of
                                                       : "the last " + std::to_string(plan.split_tiles) + " of " + of;
  if (plan.by_columns) return which + " as two column halves each, run after the whole tiles (a column tail)";
  return which + " split " + std::to_string(plan.splits) + " ways in K" +
         (plan.split_tiles == tiles ? "" : ", run first (a k-range tail)");
}

// Workspace of a split-K launch: one uint32 arrival counter per split tile (256-byte aligned block), then `splits`
// fp32 partial tiles per split tile.
inline uint64_t splitk_counter_bytes(uint64_t tiles) { return (tiles * 4 + 255) / 256 * 256; }
inline uint64_t splitk_workspace_bytes(int bm, int bn, const Problem& p, SplitPlan plan) {
  const uint64_t tiles = tile_count(bm, bn, p);
  plan = clamp_plan(plan, tiles, (uint64_t(p.k) + 63) / 64);
  if (plan.splits <= 1 || plan.split_tiles == 0 || plan.by_columns) return 0;
  return splitk_counter_bytes(plan.split_tiles) + uint64_t(plan.split_tiles) * plan.splits * uint64_t(bm) * bn * 4;
}

}  // namespace tgemm::sm90
