// The benchmark's host-side choices: how many operand sets a shape rotates through.
#include <gtest/gtest.h>

#include "bench/problem_bench.h"

namespace tgemm {
namespace {

constexpr size_t kMB = size_t(1) << 20;
constexpr size_t kL2 = 60 * kMB;  // the H200's

TEST(Rotations, EnoughSetsThatEachComesBackColdAndNeverOnlyOne) {
  // Small sets: up to 64 of them.
  EXPECT_EQ(bench::rotations_for(1 * kMB, kL2), 64);
  // 16 MB sets: the 12 others exceed 3x the L2 between two uses of one.
  EXPECT_EQ(bench::rotations_for(16 * kMB, kL2), 13);
  // A decode layer's W larger than the L2 (28672 x 4096 bf16 = 224 MiB) still gets a second set, so a launch never
  // re-reads the W whose tail the launch before it left in L2.
  EXPECT_EQ(bench::rotations_for(224 * kMB + 8192, kL2), 2);
  // The seed's largest X (2 GB) too; a set beyond the 8 GB budget stays alone.
  EXPECT_EQ(bench::rotations_for(size_t(1966) * kMB, kL2), 2);
  EXPECT_EQ(bench::rotations_for(size_t(9) << 30, kL2), 1);
  EXPECT_EQ(bench::rotations_for(0, kL2), 64);
}

}  // namespace
}  // namespace tgemm
