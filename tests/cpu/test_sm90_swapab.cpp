// The sm90 swap-AB kernels' split choice (sm90_swapab_plan.h): a cluster of 2 where one CTA per output tile leaves
// SMs idle and K is long enough, never more than 2 (clusters of 4 and 8 measured slower, run 43), and 1 where the
// tiles alone fill the GPU.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "backends/sm90/sm90_swapab_plan.h"
#include "common/problem_mnk.h"

namespace tgemm::sm90 {
namespace {

constexpr auto problem = tgemm::testing::problem_mnk;

// CTAs resident at once on an H200 unclustered and in clusters of 2 (one CTA per SM).
constexpr std::array<int, 2> kH200 = {132, 132};

TEST(Sm90SwapAb, SplitsInTwoWhereTheTilesLeaveSmsIdle) {
  // 64 tiles of 64 W rows: split, 128 CTAs in one wave, 32 k-steps each.
  EXPECT_EQ(choose_swapab_splits(problem(32, 4096, 4096), 64, 64, kH200), 2u);
  EXPECT_EQ(choose_swapab_splits(problem(64, 4096, 14336), 64, 64, kH200), 2u);  // run 45's pick
  EXPECT_EQ(choose_swapab_splits(problem(128, 1280, 8192), 128, 64, kH200), 2u);
}

TEST(Sm90SwapAb, NoSplitWhereTheTilesFillTheGpu) {
  // 448 tiles: 4 waves unsplit, 7 split; splitting does not win by 3%.
  EXPECT_EQ(choose_swapab_splits(problem(32, 28672, 4096), 64, 64, kH200), 1u);
  EXPECT_EQ(choose_swapab_splits(problem(128, 37888, 3584), 128, 64, kH200), 1u);
}

TEST(Sm90SwapAb, AtLeastFourKStepsPerSplit) {
  EXPECT_EQ(choose_swapab_splits(problem(32, 1024, 448), 64, 64, kH200), 1u);  // 7 k-steps: 3 each, not split
  EXPECT_EQ(choose_swapab_splits(problem(32, 1024, 512), 64, 64, kH200), 2u);  // 8 k-steps: 4 each
}

TEST(Sm90SwapAb, NeverMoreThanTwoAndAPureFunction) {
  for (int64_t m : {1, 32, 64, 128, 200})
    for (int64_t n : {8, 1000, 4096, 28672})
      for (int64_t k : {8, 1024, 16384, 65536}) {
        const uint32_t s = choose_swapab_splits(problem(m, n, k), 64, 64, kH200);
        EXPECT_TRUE(s == 1 || s == 2) << m << "x" << n << "x" << k;
        EXPECT_EQ(s, choose_swapab_splits(problem(m, n, k), 64, 64, kH200));
      }
}

}  // namespace
}  // namespace tgemm::sm90
