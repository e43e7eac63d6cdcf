// The row-stream kernels' plan (skinny_rs.h), walked block by block, stage by stage, warp by warp and lane by lane
// as skinny_rs_kernel.cuh walks it: every 16-byte word of W is multiplied exactly once, every slot of every epilogue
// tile is written exactly once before its tile's barrier, every output is stored once, and a stage never holds more
// than 16 KB.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "backends/skinny/skinny_config.h"

namespace tgemm::skinny {
namespace {

struct Walk {
  int64_t words_multiplied = 0;     // (row, word) pairs, each checked once
  int64_t outputs = 0;              // (row, m) stores
  int max_stage_bytes = 0;
  int tiles = 0;
};

// The kernel's loops for one problem on `g` blocks; fails the test on any double or missing product.
void walk(int64_t n, int64_t k, int mt, int m, int64_t g, Walk& out) {
  const RsPlan pl = rs_plan(k, mt);
  std::vector<uint8_t> seen(size_t(n * pl.kw), 0);
  std::vector<uint8_t> stored(size_t(n * m), 0);
  for (int64_t b = 0; b < g; ++b) {
    const int64_t r0 = rs_block_row(n, g, b);
    const int rows = int(rs_block_row(n, g, b + 1) - r0);
    const int stages = rs_block_stages(pl, rows);
    // slot writes since the tile's buffer was last read: (tile, row in tile, part, m) -> count
    std::map<std::tuple<int, int, int, int>, int> slots;
    std::vector<int> owner_of_row(size_t(rows), -1);
    int next_seq[kRsMaxGroups] = {};
    RsCursor c = rs_cursor(pl, rows);
    for (int s = 0; s < stages; ++s, rs_advance(pl, rows, c)) {
      // The producer walks the cursor; it must agree with the closed forms. (The consumers' tile ends are
      // rs_tile_last_stage, checked against rs_tile_end below.)
      const RsStage st = rs_stage(pl, rows, s);
      ASSERT_EQ(c.s, s);
      ASSERT_EQ(c.st.row, st.row) << "stage " << s;
      ASSERT_EQ(c.st.nrows, st.nrows) << "stage " << s;
      ASSERT_EQ(c.st.word0, st.word0) << "stage " << s;
      ASSERT_EQ(c.st.words, st.words) << "stage " << s;
      ASSERT_EQ(c.st.row_end, st.row_end) << "stage " << s;
      ASSERT_EQ(c.owner, rs_owner(pl, s)) << "stage " << s;
      ASSERT_EQ(c.seq, rs_group_seq(pl, s)) << "stage " << s;
      ASSERT_GE(st.row, 0);
      ASSERT_LE(st.row + st.nrows, rows);
      ASSERT_GT(st.nrows, 0);
      ASSERT_GT(st.words, 0);
      out.max_stage_bytes = std::max(out.max_stage_bytes, st.nrows * st.words * 16);
      const int owner = rs_owner(pl, s);
      ASSERT_LT(owner, pl.groups);
      // Each group's stages take its ring's slots in turn (0, 1, 2, ...): the group waits on every round of each of
      // its slots, so an mbarrier's parity always names the round it waits for.
      ASSERT_EQ(rs_group_seq(pl, s), next_seq[owner]++) << "stage " << s;
      // A lane's sums carry over a row's chunks: every chunk of a row goes to the same group.
      for (int r = 0; r < st.nrows; ++r) {
        int& o = owner_of_row[size_t(st.row + r)];
        if (pl.chunks > 1 && o >= 0) ASSERT_EQ(o, owner) << "row " << st.row + r;
        o = owner;
      }
      for (int wg = 0; wg < kRsStageWarps; ++wg) {
        const RsWarpPart wp = rs_warp_part(pl, pl.chunks > 1 ? st.words : pl.chunk_words, wg);
        ASSERT_LT(wp.part, pl.parts);
        // X in registers: the kernel loads words w_lo + lane + 32 j (j < rs_batch_words) of X's row once, from the
        // warp's first part, and multiplies them in every stage: the lane's words must be those in every stage and row.
        const RsWarpPart wp0 = rs_warp_part(pl, pl.chunk_words, wg);
        const bool x_regs = rs_x_in_registers(pl, mt, wp0);
        if (x_regs) {
          ASSERT_EQ(st.word0, 0) << "stage " << s;
          ASSERT_EQ(wp.w_lo, wp0.w_lo);
          ASSERT_EQ(wp.w_hi, wp0.w_hi);
        }
        for (int r = wp.row0; r < st.nrows; r += wp.row_step) {
          const int64_t row = r0 + st.row + r;
          for (int lane = 0; lane < 32; ++lane)
            for (int i = wp.w_lo + lane; i < wp.w_hi; i += 32) {
              if (x_regs)
                ASSERT_LT((i - wp0.w_lo - lane) / 32, rs_xreg_words(mt)) << "a word past the lane's registers";
              const int64_t word = st.word0 + i;
              ASSERT_LT(word, pl.kw);
              ASSERT_EQ(seen[size_t(row * pl.kw + word)]++, 0) << "row " << row << " word " << word;
              ++out.words_multiplied;
            }
          if (st.row_end) {
            const int rb = st.row + r;
            for (int mm = 0; mm < m; ++mm) {
              ASSERT_LT(rs_slot(pl, mt, rb % pl.tile_rows, wp.part, mm), rs_slot_floats(pl, mt));
              ASSERT_EQ((slots[{rb / pl.tile_rows, rb % pl.tile_rows, wp.part, mm}]++), 0);
            }
          }
        }
      }
      if (!rs_tile_end(pl, rows, st)) continue;
      const int t = (st.row + st.nrows - 1) / pl.tile_rows;
      const int nr = rs_tile_rows(pl, rows, t);
      ASSERT_LE(nr * m, kRsOutputsPerTile);
      ++out.tiles;
      for (int tid = 0; tid < nr * m; ++tid) {
        const int r = tid % nr, mm = tid / nr;
        for (int q = 0; q < pl.parts; ++q)  // every part the sum reads was written for this tile
          ASSERT_EQ((slots[{t, r, q, mm}]), 1) << "tile " << t << " row " << r << " part " << q;
        const int64_t row = r0 + t * pl.tile_rows + r;
        ASSERT_EQ(stored[size_t(mm * n + row)]++, 0);
        ++out.outputs;
      }
    }
  }
  // The consumers' walk: each group's own stages, in order, as the closed forms name them, every stage once; and the
  // last stage of each tile where rs_tile_end says the tile ends.
  for (int64_t b = 0; b < g; ++b) {
    const int64_t r0 = rs_block_row(n, g, b);
    const int rows = int(rs_block_row(n, g, b + 1) - r0);
    const int stages = rs_block_stages(pl, rows);
    std::vector<int> visits(size_t(stages), 0);
    for (int grp = 0; grp < pl.groups; ++grp) {
      int prev = -1;
      for (RsGroupCursor c = rs_group_cursor(pl, rows, grp); c.s < stages; rs_group_advance(pl, rows, c)) {
        ASSERT_GT(c.s, prev);
        prev = c.s;
        ++visits[size_t(c.s)];
        ASSERT_EQ(rs_owner(pl, c.s), grp) << "stage " << c.s;
        ASSERT_EQ(rs_group_seq(pl, c.s), c.k) << "stage " << c.s;
        const RsStage st = rs_stage(pl, rows, c.s);
        ASSERT_EQ(c.st.row, st.row);
        ASSERT_EQ(c.st.nrows, st.nrows);
        ASSERT_EQ(c.st.word0, st.word0);
        ASSERT_EQ(c.st.words, st.words);
        ASSERT_EQ(c.st.row_end, st.row_end);
      }
    }
    for (int s = 0; s < stages; ++s) ASSERT_EQ(visits[size_t(s)], 1) << "stage " << s;
    int t = 0;
    for (int s = 0; s < stages; ++s)
      if (rs_tile_end(pl, rows, rs_stage(pl, rows, s))) ASSERT_EQ(rs_tile_last_stage(pl, rows, t++), s);
    ASSERT_EQ(t, rs_tiles(pl, rows));
  }
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "word " << i << " not multiplied";
  for (size_t i = 0; i < stored.size(); ++i) ASSERT_EQ(stored[i], 1) << "output " << i << " not stored";
}

TEST(SkinnyRs, PlanOfTheDecodeShapes) {
  const RsPlan a = rs_plan(4096, 1);  // 8 KB rows: two per stage, two of the group's four warps per row
  EXPECT_EQ(a.kw, 512);
  EXPECT_EQ(a.rows, 2);
  EXPECT_EQ(a.chunks, 1);
  EXPECT_EQ(a.parts, 2);
  EXPECT_EQ(a.tile_rows, 256);
  const RsPlan b = rs_plan(14336, 2);  // 28 KB rows: two chunks of 14 KB
  EXPECT_EQ(b.rows, 1);
  EXPECT_EQ(b.chunks, 2);
  EXPECT_EQ(b.chunk_words, 896);
  EXPECT_EQ(b.parts, 4);
  EXPECT_EQ(b.tile_rows, 128);
  const RsPlan c = rs_plan(1280, 4);  // 2.5 KB rows: six per stage (15 KB), one warp each
  EXPECT_EQ(c.rows, 6);
  EXPECT_EQ(c.parts, 1);
  EXPECT_EQ(c.tile_rows, 60);
  const RsPlan d = rs_plan(512, 4);  // 1 KB rows: sixteen per stage, four per warp
  EXPECT_EQ(d.rows, 16);
  EXPECT_EQ(d.tile_rows, 64);
  EXPECT_EQ(rs_blocks(4096, 132), 132);
  EXPECT_EQ(rs_blocks(7, 132), 7);
  // The M tile 1: three groups (13 warps with the producer, at most 4 on a scheduler), X in registers where a warp's
  // part of a row is one batch of 8 words per lane (K = 4096: 256 words a part; K = 8192: 256; K = 1024: whole rows
  // of 128 words); not where the part is longer (K = 2728: rows of 341 words, one warp each) or rows take chunks.
  EXPECT_EQ(a.groups, 3);
  EXPECT_EQ(rs_threads(1), 13 * 32);
  EXPECT_EQ(b.groups, 4);
  EXPECT_EQ(rs_threads(4), 17 * 32);
  for (int64_t k : {4096, 8192, 1024, 3584})
    EXPECT_TRUE(rs_x_in_registers(rs_plan(k, 1), 1, rs_warp_part(rs_plan(k, 1), rs_plan(k, 1).chunk_words, 0))) << k;
  for (int64_t k : {2728, 14336})
    EXPECT_FALSE(rs_x_in_registers(rs_plan(k, 1), 1, rs_warp_part(rs_plan(k, 1), rs_plan(k, 1).chunk_words, 0))) << k;
  EXPECT_FALSE(rs_x_in_registers(a, 2, rs_warp_part(a, a.chunk_words, 0)));  // the M tiles 2, 4: X in shared memory
}

TEST(SkinnyRs, PlanMultipliesEveryWordOnceAndFillsEverySlot) {
  const std::vector<std::tuple<int64_t, int64_t>> nk = {
      {1, 8},       {3, 8},      {7, 4096},    {1031, 1048}, {1024, 4096}, {133, 4096}, {300, 1280},
      {1000, 512},  {513, 1024}, {77, 8200},   {40, 14336},  {9, 18944},   {5, 24576},  {1032, 8216},
      {4104, 1048}, {260, 2056}, {65, 16392},  {3, 45056}, {2, 22528}, {131, 2728}, {257, 3584}};
  for (int mt : {1, 2, 4})
    for (auto [n, k] : nk) {
      if (k * 2 * mt > kRsMaxXBytes) continue;  // max_k of the M tile
      for (int m = 1; m <= mt; ++m)
        for (int64_t g : {int64_t(1), int64_t(128), int64_t(132)}) {
          const int64_t blocks = g < n ? g : n;
          SCOPED_TRACE("mt " + std::to_string(mt) + " m " + std::to_string(m) + " n " + std::to_string(n) + " k " +
                       std::to_string(k) + " blocks " + std::to_string(blocks));
          Walk w;
          walk(n, k, mt, m, blocks, w);
          if (::testing::Test::HasFatalFailure()) return;
          EXPECT_EQ(w.words_multiplied, n * (k / 8));
          int64_t tiles = 0;  // every block's rows end in ceil(rows / TR) epilogue tiles, each summed once
          for (int64_t b = 0; b < blocks; ++b) {
            const int64_t rows = rs_block_row(n, blocks, b + 1) - rs_block_row(n, blocks, b);
            tiles += (rows + rs_plan(k, mt).tile_rows - 1) / rs_plan(k, mt).tile_rows;
          }
          EXPECT_EQ(w.tiles, tiles);
          EXPECT_EQ(w.outputs, n * m);
          EXPECT_LE(w.max_stage_bytes, kRsStageBytes);
          const RsPlan pl = rs_plan(k, mt);
          EXPECT_LE(rs_slot_floats(pl, mt), rs_max_slot_floats(mt));
          EXPECT_LE(rs_smem_bytes(pl, mt, m), rs_max_smem_bytes(mt));
        }
    }
}

// Rows split into chunks: the last chunk is never empty, and no chunk is above a stage, for every K a kernel takes.
TEST(SkinnyRs, ChunksCoverEveryRow) {
  for (int64_t k = 8; k <= kRsMaxXBytes / 2; k += 8) {
    const RsPlan p = rs_plan(k, 1);
    ASSERT_LE(p.chunk_words * (p.chunks > 1 ? 1 : p.rows), kRsStageWords) << k;
    ASSERT_GT(p.kw - (p.chunks - 1) * p.chunk_words, 0) << k;
    ASSERT_LE(p.kw - (p.chunks - 1) * p.chunk_words, p.chunk_words) << k;
    ASSERT_EQ(p.tile_rows % p.rows, 0) << k;
  }
}

// The ring starts on a kSmemAlign boundary (core/smem_align.h) wherever the 16-byte aligned dynamic window begins (run 324: off a
// 128-byte line the bulk copies cost m1 10%), and the launch's bytes cover the pad and everything after the ring.
TEST(SkinnyRs, RingIsAlignedInsideTheLaunchsSharedMemory) {
  for (uint32_t addr = 0; addr <= 4 * kSmemAlign; addr += 16) {
    const uint32_t pad = smem_align_pad(addr);
    ASSERT_EQ((addr + pad) % kSmemAlign, 0u) << addr;
    ASSERT_EQ(addr + pad, smem_align_up(addr)) << addr;
    ASSERT_LE(pad, kSmemAlign - 16) << addr;
  }
  EXPECT_EQ(smem_align_pad(1104), 1024u - 80u);  // the kernel's static barriers' end (cuobjdump: SHARED 1104)
  for (int mt : {1, 2, 4})
    for (int64_t k : {int64_t(8), int64_t(4096), int64_t(14336)}) {
      const RsPlan pl = rs_plan(k, mt);
      const int64_t body = (int64_t(pl.groups) << kRsGroupStagesLog2) * kRsStageBytes + int64_t(mt) * pl.kw * 16 +
                           2 * int64_t(rs_slot_floats(pl, mt)) * 4;
      EXPECT_GE(rs_smem_bytes(pl, mt, mt) - (kSmemAlign - 16), body) << mt << " " << k;
    }
}

TEST(SkinnyRs, LimitsAndNames) {
  Config c;
  c.rs = true;
  c.max_m = 4;
  EXPECT_EQ(c.name(), "skinny_bf16_m4_rs_i64");
  Config b = c;
  b.rs_blocks = 128;  // the 128-block grid: same kernel, same limits, its own name for the table
  EXPECT_EQ(b.name(), "skinny_bf16_m4_rs_b128_i64");
  EXPECT_EQ(b.limits().max_k, c.limits().max_k);
  const Limits l = c.limits();
  EXPECT_EQ(l.k_multiple, 8);
  EXPECT_EQ(l.max_k, 11264);
  EXPECT_EQ(l.max_m, 4);
  EXPECT_FALSE(l.uses_tma);
  Problem p;
  p.m = 4;
  p.n = 4096;
  p.k = 4100;
  p.ldx = p.ldw = 4104;
  p.ldy = 4096;
  const Verdict v = check_limits(l, p);
  EXPECT_FALSE(v.ok());
  EXPECT_NE(v.reason.find("K = 4100 is not a multiple of 8"), std::string::npos) << v.reason;
  p.k = 11272;
  p.ldx = p.ldw = 11272;
  EXPECT_NE(check_limits(l, p).reason.find("max K"), std::string::npos);
  p.k = 11264;
  p.ldx = p.ldw = 11264;
  EXPECT_TRUE(check_limits(l, p).ok()) << check_limits(l, p).reason;
}

}  // namespace
}  // namespace tgemm::skinny
