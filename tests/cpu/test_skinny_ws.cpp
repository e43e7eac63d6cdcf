// The persistent skinny kernel's host-side arithmetic (skinny_config.h): launch layout, the auto WK, when the
// untuned default prefers it, and that the default ring depth fits shared memory for every WK and M.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

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

// Balanced row tiles (ws_tile_rows): 7168 rows in 64-row slots are 112 tiles of 64 rows; 128 tiles of 56 rows stream
// 12.5% fewer rows per block (run 242: 1 x 7168 x 8192 on sk2 1.01 -> 1.08x cuBLASLt).
TEST(SkinnyWs, BalancedTileRows) {
  EXPECT_EQ(ws_tile_rows(7168, 64, 132), 55);
  EXPECT_EQ(ws_tile_rows(7168, 64, 132, 8), 56);  // the wgmma M tile: whole swizzle periods
  EXPECT_EQ(ws_tile_rows(4608, 64, 132), 35);     // 132 tiles
  EXPECT_EQ(ws_tile_rows(4608, 64, 132, 4), 36);  // 128 tiles (the ldmatrix kernels' alignment)
  EXPECT_EQ(ws_tile_rows(4608, 64, 132, 8), 40);  // 116 tiles
  EXPECT_EQ(ws_tile_rows(3584, 32, 132, 4), 28);  // 128 tiles where 32-row ones are 112
  EXPECT_EQ(ws_tile_rows(6144, 64, 132), 47);
  EXPECT_EQ(ws_tile_rows(4608, 32, 132), 18);   // 256 tiles: 36 rows per block where 144 tiles of 32 give 64
  EXPECT_EQ(ws_tile_rows(4096, 32, 132), 32);   // 128 tiles: one round already
  EXPECT_EQ(ws_tile_rows(28672, 16, 132), 16);  // many rounds: the slot's rows
  EXPECT_EQ(ws_tile_rows(1024, 16, 132), 8);    // one round of 128 tiles of 8 rows on 128 SMs
  EXPECT_EQ(ws_tile_rows(1000, 128, 132), 64);  // never below half the slot
  const LaunchShape sh = ws_launch_shape(7168, 8192, 2, 132, 4);
  EXPECT_EQ(sh.block_rows, 56);
  EXPECT_EQ(sh.row_tiles, 128);
  EXPECT_EQ(sh.blocks, 128);
  EXPECT_EQ(ws_launch_shape(7168, 8192, 2, 132).block_rows, 64);  // unbalanced unless asked
  // For every N, WK and alignment: a multiple of it within [max(8, BR / 2), BR], and no block streams more rows than
  // with BR-row tiles.
  for (int align : {1, 4, 8})
  for (int wk = 1; wk <= kWsMaxWk; wk *= 2) {
    const int br = kBlockRowsMax / wk;
    for (int64_t n : {int64_t(1), int64_t(7), int64_t(8), int64_t(100), int64_t(1031), int64_t(2112), int64_t(3584),
                      int64_t(4104), int64_t(5120), int64_t(9000), int64_t(37888), int64_t(1) << 30}) {
      const LaunchShape b = ws_launch_shape(n, 4096, wk, 132, align), u = ws_launch_shape(n, 4096, wk, 132);
      EXPECT_EQ(b.block_rows % align, 0) << n << " " << wk;
      EXPECT_GE(b.block_rows, std::max(8, br / 2)) << n << " " << wk;
      EXPECT_LE(b.block_rows, br) << n << " " << wk;
      EXPECT_EQ(b.row_tiles, (n + b.block_rows - 1) / b.block_rows);
      const auto rows_per_block = [](const LaunchShape& s) { return (s.row_tiles + 131) / 132 * s.block_rows; };
      EXPECT_LE(rows_per_block(b), rows_per_block(u)) << n << " " << wk;
    }
  }
}

TEST(SkinnyWs, AutoWkBalancesTheRounds) {
  EXPECT_EQ(ws_auto_wk(28672, 4096, 132), 4);  // 896 tiles: 7 rounds, 3% idle (128-row tiles: 2 rounds, 15%)
  EXPECT_EQ(ws_auto_wk(37888, 3584, 132), 4);  // 1184 tiles: 9 rounds
  EXPECT_EQ(ws_auto_wk(1280, 8192, 132), 8);   // 80 tiles of 16 rows
  // 96 / 72 blocks of 64 rows do not pull 1.375 / 1.5 times a fair share (run 51: 6144x4096 WK 2 17.0 us, WK 8
  // 14.9): three rounds of 16-row tiles on every SM instead (kWsIdleBoost).
  EXPECT_EQ(ws_auto_wk(6144, 4096, 132), 8);
  EXPECT_EQ(ws_auto_wk(4608, 3584, 132), 8);
  EXPECT_EQ(ws_auto_wk(8192, 3584, 132), 2);   // 128 tiles of 64 rows: one round on 128 SMs
}

TEST(SkinnyWs, DefaultPrefersItFromOneMillionWeights) {
  EXPECT_TRUE(ws_preferred(1, 28672, 4096));
  EXPECT_TRUE(ws_preferred(16, 37888, 3584));
  EXPECT_TRUE(ws_preferred(8, 4096, 14336));
  EXPECT_TRUE(ws_preferred(1, 3584, 18944));  // an unbalanced last round: still faster than the ring (run 51)
  EXPECT_TRUE(ws_preferred(1, 4096, 4096));
  EXPECT_TRUE(ws_preferred(16, 8192, 1024));  // 8M weights, the smallest decode layer
  EXPECT_TRUE(ws_preferred(8, 1024, 1024));   // 1M weights (run 411: 1.20x cuBLASLt against the ring's 0.62x)
  EXPECT_TRUE(ws_preferred(16, 3072, 2048));
  EXPECT_FALSE(ws_preferred(1, 1024, 1023));  // below 1M weights: the register ring's shorter start (run 410)
  EXPECT_FALSE(ws_preferred(8, 256, 64));
  EXPECT_FALSE(ws_preferred(17, 28672, 4096)); // the kernel's M tile is 16
  EXPECT_FALSE(ws_preferred(0, 28672, 4096));
}

TEST(SkinnyWs, DefaultRingFitsSharedMemory) {
  for (int wk = 1; wk <= kWsMaxWk; wk *= 2)
    for (int m = 1; m <= 16; ++m) {
      EXPECT_GE(ws_stages(wk, m), ws_default_stage_cap(m)) << wk << " " << m;  // the default depth is never cut
      EXPECT_LE(ws_stages(wk, m) * ws_stage_bytes(wk, m) + 1024, kWsSmemBytes) << wk << " " << m;
    }
}

// 4 stages up to M = 8, 5 up to 16 (runs 206-207), the full ring above.
TEST(SkinnyWs, DefaultRingDepthByM) {
  EXPECT_EQ(ws_default_stage_cap(1), 4);
  EXPECT_EQ(ws_default_stage_cap(8), 4);
  EXPECT_EQ(ws_default_stage_cap(9), 5);
  EXPECT_EQ(ws_default_stage_cap(16), 5);
  EXPECT_EQ(ws_default_stage_cap(17), kWsMaxStages);
  EXPECT_EQ(ws_default_stage_cap(64), kWsMaxStages);
  // Balanced tiles keep the W bytes in flight: 40 of 64 rows take 6 stages at M <= 8, 56 of 64 still 4.
  EXPECT_EQ(ws_default_stage_cap(1, 64, 64), 4);
  EXPECT_EQ(ws_default_stage_cap(1, 40, 64), 6);
  EXPECT_EQ(ws_default_stage_cap(8, 56, 64), 4);
  EXPECT_EQ(ws_default_stage_cap(16, 40, 64), 8);
  EXPECT_EQ(ws_default_stage_cap(16, 8, 16), 10);
  EXPECT_EQ(ws_default_stage_cap(32, 16, 32), kWsMaxStages);
  EXPECT_EQ(ws_default_stage_cap(1, 0, 64), 4);  // 0 rows: the slot's
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

// M tile 64 (wgmma): WK <= 2, so its family is auto, sk1 and sk2; M tile 32 (mma.sync, as M tile 16) adds sk4.
// M up to the tile.
TEST(SkinnyWs, WideTilesTakeAtMostTwoOrFourWarpsAlongK) {
  for (int mt : {32, 64}) {
    Config c;
    c.max_m = mt;
    c.tma = c.ws = true;
    EXPECT_EQ(c.max_wk(), mt == 64 ? 2 : 4);
    EXPECT_EQ(c.max_split(), mt == 64 ? 2 : 4);
    EXPECT_EQ(c.limits().max_m, mt);
    EXPECT_EQ(c.limits().min_m, 1);
    EXPECT_EQ(c.limits().ld_multiple, 8);
    EXPECT_TRUE(c.limits().uses_tma);
    c.split_k = 2;
    EXPECT_EQ(c.name(), "skinny_bf16_m" + std::to_string(mt) + "_ws_sk2_i64");
  }
  Config c16;
  c16.max_m = 16;
  c16.tma = c16.ws = true;
  EXPECT_EQ(c16.max_split(), kWsMaxWk);  // the M = 16 family keeps sk1..sk8
}

// The "wsg" kernels: the wgmma path at M tiles 8 and 16, so WK <= 2 as at M tile 64 (one m64 warpgroup per unit), an
// MT-row X slot per unit, and balanced tiles a multiple of 8 rows (each unit's wgmma descriptor on a 1024-byte
// swizzle period): on the 4096- to 8192-row decode layers, 128 tiles of 32-64 rows. The ring (skinny.cpp) holds
// kWsWideStages of the largest stage a registered kernel launches, and kWsWideMinStages of any.
TEST(SkinnyWs, WgmmaTilesEightAndSixteen) {
  for (int mt : {8, 16})
    for (int upw : {1, 2}) {
      Config c;
      c.max_m = mt;
      c.tma = c.ws = c.wg = true;
      c.upw = upw;
      EXPECT_TRUE(c.wide());
      EXPECT_EQ(c.max_wk(), 2);
      EXPECT_EQ(c.limits().max_m, mt);
      c.split_k = 2;
      EXPECT_EQ(c.name(), "skinny_bf16_m" + std::to_string(mt) + (upw == 1 ? "_wsg" : "_wsg2") + "_sk2_i64");
      const int room = ws_smem_bytes(mt) - kWsWideSlack - int(kSmemAlign);
      EXPECT_GE(room / ws_wide_stage_bytes(2 * upw, kBlockRowsMax / 2, mt), kWsWideStages) << mt << " " << upw;
      EXPECT_GE(room / ws_wide_stage_bytes(upw, kBlockRowsMax, mt), kWsWideMinStages) << mt << " " << upw;
    }
  Config plain16;
  plain16.max_m = 16;
  plain16.tma = plain16.ws = true;
  EXPECT_FALSE(plain16.wide());
  for (auto [n, tr] : {std::pair<int64_t, int>{4096, 32}, {6144, 48}, {8192, 64}}) {
    const LaunchShape sh = ws_launch_shape(n, 4096, 2, 132, 8);
    EXPECT_EQ(sh.block_rows, tr) << n;
    EXPECT_EQ(sh.row_tiles, 128) << n;
    EXPECT_EQ(sh.block_rows % 8, 0) << n;
  }
}

// Ring + static partial tile + barriers inside the 227 KB a block may have, and at least 4 stages, for every M the
// M tiles 32 (mma.sync, M-row X boxes) and 64 (wgmma, 64-row X slots, units TR <= 128 / WK rows apart) take; the
// M = 16 kernel's budget is unchanged.
TEST(SkinnyWs, WideRingFitsSharedMemory) {
  EXPECT_EQ(ws_smem_bytes(16), kWsSmemBytes);
  EXPECT_EQ(ws_part_floats(16), part_floats(16));
  for (int mt : {32, 64})
    for (int wk = 1; wk <= ws_max_wk(mt); wk *= 2) {
      EXPECT_LE(ws_smem_bytes(mt) + 4 * ws_part_floats(mt) + 8 * 2 * kWsMaxStages + 16, 227 * 1024) << mt;
      EXPECT_LE(wk * mt * (kBlockRowsMax / wk + kPartPad), ws_part_floats(mt)) << mt << " " << wk;
      if (mt == 64) {
        const int st = (ws_smem_bytes(mt) - kWsWideSlack - int(kSmemAlign)) /
                       ws_wide_stage_bytes(wk, kBlockRowsMax / wk, mt);
        EXPECT_GE(st, kWsWideStages) << wk;
        continue;
      }
      for (int m = 1; m <= mt; ++m) {
        const int st = ws_stages(wk, m, mt);
        EXPECT_GE(st, 4) << mt << " " << wk << " " << m;
        EXPECT_LE(st * ws_stage_bytes(wk, m) + 1024, ws_smem_bytes(mt)) << mt << " " << wk << " " << m;
      }
    }
}

// The split across blocks: only where the chosen WK leaves fewer row tiles than SMs; splits of whole stages, none
// empty, covering K; the grid never more than the SMs.
TEST(SkinnyWs, AutoShapeSplitsKOnlyWhereRowTilesAreFew) {
  const int64_t layers[][2] = {{1280, 8192}, {28672, 4096}, {3584, 18944}, {3584, 3584}, {37888, 3584}, {4096, 14336},
                               {4096, 4096}, {4608, 3584}, {6144, 4096}, {7168, 8192}, {8192, 1024}, {8192, 3584},
                               {3, 8},       {1031, 1048},  {4104, 1048}, {1024, 64},   {100000, 64}};
  for (auto [n, k] : layers)
    for (int mt : {16, 32, 64})
      for (int64_t m : {int64_t(1), int64_t(mt)}) {
        const LaunchShape sh = ws_auto_shape(m, n, k, ws_max_wk(mt), 132);
        const int wk = 1 << sh.wk_log2;
        EXPECT_LE(wk, ws_max_wk(mt));
        EXPECT_EQ(sh.k_steps, (k + 63) / 64);
        EXPECT_LE(sh.blocks, 132);
        EXPECT_EQ(sh.blocks, std::min<int64_t>(sh.row_tiles * sh.s, 132));
        // The kernel takes its tile rows from block_rows (TmaParams::tile_rows): the slot's 128 / WK at most, and all
        // of them under a split, whose partial tiles are 128 / WK rows.
        EXPECT_LE(sh.block_rows, kBlockRowsMax >> sh.wk_log2);
        if (sh.s > 1) EXPECT_EQ(sh.block_rows, kBlockRowsMax >> sh.wk_log2) << n << "x" << k;
        if (sh.s == 1) {
          EXPECT_EQ(ws_workspace_bytes(sh, m), 0);
          continue;
        }
        EXPECT_LT(sh.row_tiles, 132) << n << "x" << k;
        EXPECT_LE(sh.s, kWsMaxSplits);
        EXPECT_EQ(sh.sps % wk, 0) << n << "x" << k;
        EXPECT_GE(sh.sps, kWsMinSplitUnits);
        EXPECT_LT((sh.s - 1) * sh.sps, sh.k_steps) << n << "x" << k;  // the last split is not empty
        EXPECT_GE(sh.s * sh.sps, sh.k_steps) << n << "x" << k;
        EXPECT_EQ(ws_workspace_bytes(sh, m), ws_counter_bytes(sh) + sh.row_tiles * sh.s * m * sh.block_rows * 4);
        EXPECT_EQ(ws_counter_bytes(sh) % 256, 0);
        EXPECT_GE(ws_counter_bytes(sh), sh.row_tiles * 4);
      }
  // Enough row tiles: no split, and the WK of the M = 16 model (what the tuned table and ws_preferred measured).
  for (auto [n, k] : {std::pair<int64_t, int64_t>{28672, 4096}, {37888, 3584}, {4096, 14336}}) {
    const LaunchShape sh = ws_auto_shape(16, n, k, kWsMaxWk, 132);
    EXPECT_EQ(sh.s, 1);
    EXPECT_EQ(1 << sh.wk_log2, ws_auto_wk(n, k, 132));
  }
  // K >= 8192 with few row tiles splits: 3584x18944 at M = 64, 56 tiles of 64 rows, K in two splits of 148 units on
  // 112 SMs; 1280x8192, 20 tiles, five splits of 26 units (the last 24) on 100 SMs.
  const LaunchShape few = ws_auto_shape(64, 3584, 18944, 2, 132);
  EXPECT_EQ(few.wk_log2, 1);
  EXPECT_EQ(few.s, 2);
  EXPECT_EQ(few.sps, 148);
  EXPECT_EQ(few.blocks, 112);
  const LaunchShape fewer = ws_auto_shape(64, 1280, 8192, 2, 132);
  EXPECT_EQ(fewer.s, 5);
  EXPECT_EQ(fewer.sps, 26);
  EXPECT_EQ(fewer.blocks, 100);
  // K < 8192 never splits (ws-4: slower on 3584x3584, 4096x4096, 4608x3584 at every M): the WK of ws_auto_wk.
  for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {3584, 3584}, {4608, 3584}, {1031, 1048}}) {
    const LaunchShape sh = ws_auto_shape(64, n, k, 2, 132);
    EXPECT_EQ(sh.s, 1) << n << "x" << k;
    EXPECT_EQ(1 << sh.wk_log2, ws_auto_wk(n, k, 132, 2)) << n << "x" << k;
  }
}

TEST(SkinnyWs, AutoShapeIsSafeForHostileSizes) {
  for (int64_t v : {int64_t(1) << 40, INT64_MAX, int64_t(0), int64_t(-5)}) {
    const LaunchShape a = ws_auto_shape(32, v, 4096, 2, 132);
    const LaunchShape b = ws_auto_shape(32, 4096, v, 2, 132);
    EXPECT_EQ(a.s, 1);
    EXPECT_EQ(b.s, 1);
  }
}

}  // namespace
}  // namespace tgemm::skinny
