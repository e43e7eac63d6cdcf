// The sm90 split-K plan (sm90_split_plan.h): every tile split where the tiles are few and K long, a stream-K tail
// where K is long and a partial last round leaves at least half the SMs idle, nothing where neither pays; the
// workspace it takes.
#include <gtest/gtest.h>

#include <cstdint>

#include "backends/sm90/sm90_split_plan.h"
#include "common/problem_mnk.h"

namespace tgemm::sm90 {
namespace {

constexpr auto problem = tgemm::testing::problem_mnk;

TEST(Sm90SplitPlan, LongKGetsAStreamKTail) {
  // 3072 tiles of 64x256 on 132 SMs: 23 rounds and 36 tiles, split 3 ways (108 units of 21-22 of the 64 k-steps).
  const SplitChoice c = choose_splits(64, 256, problem(8192, 6144, 4096), 132);
  EXPECT_EQ(c.splits, 3u);
  EXPECT_EQ(c.split_tiles, 36u);
  // The same with the tail turned off (TGEMM_SM90_TAIL_MIN_KSTEPS=-1): no split.
  EXPECT_EQ(choose_splits(64, 256, problem(8192, 6144, 4096), 132, -1).splits, 1u);
  // 128x128 tiles: the same 3072.
  EXPECT_EQ(choose_splits(128, 128, problem(8192, 6144, 4096), 132).split_tiles, 36u);
  // 448 tiles = 3 rounds + 52, split 2 ways (run 132: 0.99 -> 1.11x cuBLASLt).
  const SplitChoice d = choose_splits(64, 256, problem(2048, 3584, 18944), 132);
  EXPECT_EQ(d.splits, 2u);
  EXPECT_EQ(d.split_tiles, 52u);
}

TEST(Sm90SplitPlan, NoTailAtShortK) {
  // The seed shape (20 k-steps) and a 2-round one: a tail measured slower there (run 132).
  EXPECT_EQ(choose_splits(64, 256, problem(8192, 6144, 1280), 132).splits, 1u);
  EXPECT_EQ(choose_splits(64, 256, problem(4096, 1280, 1280), 132).splits, 1u);
  EXPECT_EQ(choose_splits(64, 256, problem(8192, 6144, 64 * (kMinKStepsTail - 1)), 132).splits, 1u);
  EXPECT_EQ(choose_splits(64, 256, problem(8192, 6144, 64 * kMinKStepsTail), 132).splits, 3u);
}

TEST(Sm90SplitPlan, NoTailWhereTheLastRoundIsMoreThanHalfFullOrTheRoundsAreWhole) {
  // 65536 x 6144 x 4096: 24576 tiles = 186 rounds + 24; a tail, but 1/186 of a round to gain is below the 1% bar.
  EXPECT_EQ(choose_splits(64, 256, problem(65536, 6144, 4096), 132).splits, 1u);
  // 4096 x 4096: 1024 tiles = 7 rounds + 100 (> 66).
  EXPECT_EQ(choose_splits(64, 256, problem(4096, 4096, 4096), 132).splits, 1u);
  // 132 x 4 tiles exactly.
  EXPECT_EQ(choose_splits(64, 256, problem(64 * 132, 1024, 4096), 132).splits, 1u);
}

TEST(Sm90SplitPlan, TailSplitsKeepFourKStepsEach) {
  // 136 tiles (1 round + 4): 132 / 4 = 33 ways, capped by kMaxSplits (8).
  const SplitChoice c = choose_splits(64, 256, problem(1088, 2048, 4096), 132);
  EXPECT_EQ(c.splits, kMaxSplits);
  EXPECT_EQ(c.split_tiles, 4u);
  // 8 ways of 4 k-steps need 32; 48 k-steps allow them.
  EXPECT_EQ(choose_splits(64, 256, problem(1088, 2048, 64 * 48), 132).splits, kMaxSplits);
}

TEST(Sm90SplitPlan, FewTilesAndLongKSplitEveryTile) {
  // 128 x 1280 x 8192: 10 tiles of 64x256, 128 k-steps: every tile split (run 80 measured 4 splits 2x faster).
  const SplitChoice c = choose_splits(64, 256, problem(128, 1280, 8192), 132);
  EXPECT_GT(c.splits, 1u);
  EXPECT_EQ(c.split_tiles, SplitPlan::kAllTiles);
}

// Short K, a last round at most half full, a kernel that runs a column tail: those tiles as column halves (the
// model: 23 rounds of 22 k-steps + 15 against 24 x 22).
TEST(Sm90SplitPlan, ShortKGetsAColumnTail) {
  const SplitChoice c = choose_splits(64, 256, problem(8192, 6144, 1280), 132, kMinKStepsTail, true);
  EXPECT_TRUE(c.by_columns);
  EXPECT_EQ(c.splits, kColumnParts);
  EXPECT_EQ(c.split_tiles, 36u);
  EXPECT_NEAR(c.eff, 3072.0 * 22 / 132 / (23 * 22 + 15), 1e-9);
  // Not without the kernel's column tail, nor where the last round is more than half full (4096 x 6144: 1536 =
  // 11 x 132 + 84) or the rounds are whole.
  EXPECT_EQ(choose_splits(64, 256, problem(8192, 6144, 1280), 132).splits, 1u);
  EXPECT_EQ(choose_splits(64, 256, problem(4096, 6144, 1280), 132, kMinKStepsTail, true).splits, 1u);
  EXPECT_EQ(choose_splits(64, 256, problem(64 * 132, 1024, 1280), 132, kMinKStepsTail, true).splits, 1u);
  // Fewer tiles than half the SMs: every tile halved (4096 x 1280 is 320 tiles = 2 rounds + 56; 512 x 1024 is 32).
  EXPECT_TRUE(choose_splits(64, 256, problem(4096, 1280, 1280), 132, kMinKStepsTail, true).by_columns);
  const SplitChoice all = choose_splits(64, 256, problem(512, 1024, 1280), 132, kMinKStepsTail, true);
  EXPECT_TRUE(all.by_columns);
  EXPECT_EQ(all.split_tiles, 32u);
  // Where both tails apply, the model's better: at K = 4096 (s = 3) the column tail (run 146: +2.3% over the
  // k-range tail), at K = 8192 with 20 tiles left (s = 6) the k-range tail (run 146: 1% ahead), and at 1 round + 4
  // tiles (s = 8) the k-range tail too.
  EXPECT_TRUE(choose_splits(64, 256, problem(8192, 6144, 4096), 132, kMinKStepsTail, true).by_columns);
  const SplitChoice k = choose_splits(64, 256, problem(8192, 7168, 8192), 132, kMinKStepsTail, true);
  EXPECT_FALSE(k.by_columns);
  EXPECT_EQ(k.splits, 6u);
  EXPECT_FALSE(choose_splits(64, 256, problem(1088, 2048, 4096), 132, kMinKStepsTail, true).by_columns);
  // With the k-range tail off, the column tail takes its place.
  EXPECT_TRUE(choose_splits(64, 256, problem(8192, 7168, 8192), 132, -1, true).by_columns);
}

TEST(Sm90SplitPlan, DescribedInWords) {
  const Problem p = problem(8192, 6144, 1280);
  EXPECT_EQ(describe_split_plan(64, 256, p, {}), "3072 tiles of 64x256, none split");
  EXPECT_EQ(describe_split_plan(64, 256, p, {2, 36, true}),
            "the last 36 of 3072 tiles of 64x256 as two column halves each, run after the whole tiles (a column tail)");
  EXPECT_EQ(describe_split_plan(64, 256, p, {3, 36}),
            "the last 36 of 3072 tiles of 64x256 split 3 ways in K, run first (a k-range tail)");
  EXPECT_EQ(describe_split_plan(64, 256, p, {4, SplitPlan::kAllTiles}), "every one of 3072 tiles of 64x256 split 4 ways in K");
}

TEST(Sm90SplitPlan, ClampAndWorkspace) {
  EXPECT_EQ(clamp_plan({4, SplitPlan::kAllTiles}, 10, 20).split_tiles, 10u);
  EXPECT_EQ(clamp_plan({40, 3}, 10, 20).splits, 20u);           // at most one split per k-step
  EXPECT_EQ(clamp_plan({1, 3}, 10, 20).split_tiles, 0u);        // unsplit: no split tiles
  EXPECT_EQ(clamp_plan({0, 3}, 10, 20).splits, 1u);
  const Problem p = problem(8192, 6144, 1280);
  EXPECT_EQ(splitk_workspace_bytes(64, 256, p, {1, SplitPlan::kAllTiles}), 0u);
  // 36 counters in one 256-byte block, then 36 x 3 fp32 tiles of 64 x 256.
  EXPECT_EQ(splitk_workspace_bytes(64, 256, p, {3, 36}), 256u + 36u * 3u * 64u * 256u * 4u);
  EXPECT_EQ(splitk_workspace_bytes(64, 256, p, {2, SplitPlan::kAllTiles}), 3072u * 4u + 3072ull * 2 * 64 * 256 * 4);
  // A column tail reduces nothing: no workspace, and always two parts.
  EXPECT_EQ(splitk_workspace_bytes(64, 256, p, {2, 36, true}), 0u);
  EXPECT_EQ(clamp_plan({5, 36, true}, 3072, 20).splits, kColumnParts);
  EXPECT_EQ(clamp_plan({2, SplitPlan::kAllTiles, true}, 3072, 20).split_tiles, 3072u);
}

}  // namespace
}  // namespace tgemm::sm90
