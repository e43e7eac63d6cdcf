// The persistent skinny kernel's host-side arithmetic (skinny_config.h): launch layout, the auto WK, when the
// untuned default prefers it, and that the default ring depth fits shared memory for every WK and M.
#include <gtest/gtest.h>

#include "backends/skinny/skinny_config.h"

namespace tgemm::skinny {
namespace {

TEST(SkinnyWs, LaunchShapeWalksRowTilesWithOneBlockPerSm) {
  const LaunchShape sh = ws_launch_shape(28672, 4096, 4, 132);
  EXPECT_EQ(sh.block_rows, 32);
  EXPECT_EQ(sh.wk_log2, 2);
  EXPECT_EQ(sh.s, 1);
  EXPECT_EQ(sh.row_tiles, 896);
  EXPECT_EQ(sh.blocks, 132);   // persistent: 7 rounds of 132 tiles at most
  EXPECT_EQ(sh.k_steps, 64);   // 64-element units
  const LaunchShape few = ws_launch_shape(1280, 8192, 8, 132);
  EXPECT_EQ(few.row_tiles, 80);
  EXPECT_EQ(few.blocks, 80);   // fewer tiles than SMs: one block per tile
  EXPECT_EQ(ws_launch_shape(3, 8, 1, 132).blocks, 1);
}

TEST(SkinnyWs, AutoWkBalancesTheRounds) {
  EXPECT_EQ(ws_auto_wk(28672, 4096, 132), 4);  // 896 tiles: 7 rounds, 3% idle (128-row tiles: 2 rounds, 15%)
  EXPECT_EQ(ws_auto_wk(37888, 3584, 132), 4);  // 1184 tiles: 9 rounds
  EXPECT_EQ(ws_auto_wk(1280, 8192, 132), 8);   // 80 tiles of 16 rows
}

TEST(SkinnyWs, DefaultPrefersItOnlyOnLargeBalancedLayers) {
  EXPECT_TRUE(ws_preferred(1, 28672, 4096, 132));
  EXPECT_TRUE(ws_preferred(16, 37888, 3584, 132));
  EXPECT_TRUE(ws_preferred(8, 4096, 14336, 132));
  EXPECT_FALSE(ws_preferred(1, 3584, 18944, 132));  // 112 tiles: the round is 15% empty
  EXPECT_FALSE(ws_preferred(4, 7168, 8192, 132));
  EXPECT_FALSE(ws_preferred(1, 4096, 4096, 132));   // below 32M weights
  EXPECT_FALSE(ws_preferred(17, 28672, 4096, 132)); // the kernel's M tile is 16
}

TEST(SkinnyWs, DefaultRingFitsSharedMemory) {
  for (int wk = 1; wk <= kWsMaxWk; wk *= 2)
    for (int m = 1; m <= 16; ++m) {
      EXPECT_GE(ws_stages(wk, m), kWsDefaultStages) << wk << " " << m;
      EXPECT_LE(ws_stages(wk, m) * ws_stage_bytes(wk, m) + 1024, kWsSmemBytes) << wk << " " << m;
    }
}

TEST(SkinnyWs, GeneratedNames) {
  Config c;
  c.in = DType::bf16;
  c.max_m = 16;
  c.tma = c.ws = true;
  c.split_k = 4;
  EXPECT_EQ(c.name(), "skinny_bf16_m16_ws_sk4_i64");
  c.split_k = 0;
  c.in = DType::fp16;
  EXPECT_EQ(c.name(), "skinny_fp16_m16_ws_skauto_i64");
}

}  // namespace
}  // namespace tgemm::skinny
