// skinny backend: the row-stream kernels' plan (skinny_rs_kernel.cuh). Host and device, no CUDA headers, so the
// plan the kernel walks is also what the CPU tests walk (tests/cpu/test_skinny_rs.cpp).
//
// Why: the persistent ws kernels stream W in K-major units of many rows (512 contiguous bytes of each of 32 rows per
// stage at 4096 x 4096), and stream_probe.cu (docs/benchmarks.md, session 33, runs 288-294; 32 MiB under PDL, % of the
// decode bench's copy) put that stage at 82.0% against 91.4% for a ring of 16 KB 1D bulk copies, and a GEMV that
// streams whole rows on the 1D ring at 85.3% (87.6% at 48 MiB), where the ws kernel reads 74%.
//
// Plan: block b of G takes the contiguous rows [N b / G, N (b + 1) / G) of W, whole rows only. Its stages are 16 KB:
//  - a row of K * 2 <= 16 KB: R = min(16, 1024 / KW) whole rows per stage (KW = K / 8 sixteen-byte words per row),
//    one bulk copy per stage where ldw == K (rows contiguous), else one per row;
//  - a longer row: C = ceil(KW / 1024) stages of about KW / C words each, one stage per chunk.
// The consumer warps are rs_groups(M tile) (3 or 4) groups of kRsStageWarps (4); a stage is multiplied by one group
// (rs_owner). In it, R = 1, 2 or 4 rows take 4 / R warps each (warp w: row w / (4 / R), part w % (4 / R) of the row's
// words); other R take one warp per row (rows w, w + 4, ...). A lane multiplies words lane, lane + 32, ... of its part
// with the same words of X (whole in shared memory; the M tile 1 keeps them in registers where they repeat) in fp32,
// and its sums for a row carry over that row's chunks. At a row's last chunk the warp sums its lanes (xor butterfly),
// and lane 0 writes the part's M sums to a slot; every TR rows (an epilogue tile) the consumers meet at a named
// barrier, sum each row's parts in part order, add bias and store: the same bits every run.
#pragma once

#include <cstdint>

#include "core/smem_align.h"

namespace tgemm::skinny {

inline constexpr int kRsStageBytes = 16 * 1024;
inline constexpr int kRsStageWords = kRsStageBytes / 16;
inline constexpr int kRsMaxStageRows = 16;   // short rows: at most 16 per stage
// The consumer warps form groups (rs_groups); group g takes the stages rs_owner assigns it, so that the groups multiply
// different stages at once. With all 8 warps on every stage (run 296) a stage's latency (wait, products, the row's
// butterfly, the slot) set the pace: 0.43x cuBLASLt at 1 x 4096 x 4096 (m1), and slower with the M tile; two groups of 4
// warps, the slot handed back before the butterfly: 0.97x (run 299). Nsight Compute there: one instruction per 3.1
// cycles per scheduler with 2.2 warps on each (latency, not issue), 1450 cycles a stage where the DRAM's pace is ~1000:
// four groups. Run 300 (graph replay, x cuBLASLt, the 12 decode layers at M = 1, 2, 4): m1 at M = 1 0.73-1.04 (1.011
// at 4096 x 4096, where the ws pick reads 1.177), m2 and m4 up to 0.99 / 0.94; no shape where a row-stream kernel beats
// the table's pick. 128 blocks instead of 132 (TGEMM_SKINNY_RS_BLOCKS, run 301): +0-2%; 64 blocks: -13 to -44%.
// With the ring aligned (kSmemAlign), one group of 8 warps on every stage of a 4-stage ring read 0.821x at
// 1 x 4096 x 4096 (m1) against these four groups' 1.171x (run 324), though stream_probe.cu's gemv_rows, which has that
// shape, streams at 83% of copy there (run 322): what costs the 8-warp walk here is not known. The probe in this
// kernel's own layout (gemv_groups<4, 4, 2>) is the best of eight layouts at 32 MiB (85% of copy, run 329), and this
// kernel streams at its rate with ~1.1 us more fixed cost per launch (run 330, 16-128 MiB).
//
// The M tile 1 has three groups since session 40: 13 warps, so at most 4 on each of the SM's four schedulers, whose
// register files (16384 each) then give 128 registers a thread; with 17 warps one scheduler holds 5 and a thread gets
// 96 (a 120-register build failed to launch, cudaErrorLaunchOutOfResources, run 343). The registers keep a lane's X
// words (rs_x_in_registers). stream_probe.cu (graph replay, 128 blocks): gemv_groups<3, 4, 2> streams as <4, 4, 2>
// does (9.26 / 9.28 us at 32 MiB, 13.36 / 13.27 at 48, run 345); the library's m1 kernel with three groups alone as
// with four (10.29 / 10.29 us at 32 MiB, run 346), with X in registers 9.98 (-3.0%; 16 / 48 / 64 MiB -5.0 / -2.9 /
// -2.4%). In the decode bench (run 347, graph replay, x cuBLASLt over the 12 layers at M = 1, two rounds beside the
// four-group build): m1_rs_b128 +2.8% (11 of 12 up), m1_rs +4.1%. The M tiles 2 and 4 keep four groups: with three
// (and X in shared memory) they lost 1.2% (m2 at M = 2) and 2.7% (m4 at M = 4) there.
// TGEMM_RS_GROUPS_M1=4 (host and device flags alike) builds the M tile 1 with four groups, for A/B timing.
#ifndef TGEMM_RS_GROUPS_M1
#define TGEMM_RS_GROUPS_M1 3
#endif
inline constexpr int kRsMaxGroups = 4;
constexpr int rs_groups(int mt) { return mt == 1 ? TGEMM_RS_GROUPS_M1 : 4; }
static_assert(rs_groups(1) >= 1 && rs_groups(1) <= kRsMaxGroups, "groups");
inline constexpr int kRsStageWarps = 4;  // warps per stage
constexpr int rs_consumer_warps(int mt) { return rs_groups(mt) * kRsStageWarps; }
constexpr int rs_threads(int mt) { return (rs_consumer_warps(mt) + 1) * 32; }  // + the producer warp
// X of the M tile 1 in registers (skinny_rs_kernel.cuh) takes 32 more a thread: only where at most 4 warps share a
// scheduler.
constexpr bool rs_x_registers(int mt) { return mt == 1 && rs_consumer_warps(mt) + 1 <= 16; }
// Rings: each group has its own ring of stages (rs_group_seq), so that a group waits on every round of its slots. An
// mbarrier wait tells phases apart by parity only: with one ring shared by stages of both groups, a group whose slot
// went to the other group in between could take the round before its own as complete (a hang on the GPU, run 297).
// Depth per group: 2 (8 x 16 KB in all), i.e. more than the 4 x 16 KB in flight that streamed at 91.4% in
// stream_probe.cu (run 288) beside a stage per group being multiplied; with two groups, 2 per group read as 3 did (run
// 298). TGEMM_SKINNY_RS_STAGES=1 (A/B timing) gives each group one stage: the probe's 64 KB, which the ws kernels also
// found faster than deeper rings at M <= 8 (skinny_config.h, kWsDefaultStages). Run 302 (graph replay, x cuBLASLt, m1
// at M = 1): one stage per group 1.040 at 4096 x 4096 (two: 0.999), 1.041 at 3584 x 3584 (1.005), but 0.547 at
// 4096 x 14336 (0.912), where a group's row takes two chunks one after the other. A power of two, so that a slot and
// its round cost no division.
inline constexpr int kRsGroupStagesLog2 = 1;
inline constexpr int kRsMaxStages = kRsMaxGroups << kRsGroupStagesLog2;  // the most a launch has
inline constexpr int kRsOutputsPerTile = 256;  // at most one output per consumer thread per tile
// X whole in shared memory: M * K * 2 bytes at most (M = 4: K <= 11264; M = 1: K <= 45056), beside the 128 KB ring.
inline constexpr int kRsMaxXBytes = 88 * 1024;
inline constexpr int kRsMaxTileM = 4;
// Rows: a block's rows, stages and slots are counted in int (N < 2^31, Limits::max_n).
inline constexpr int64_t kRsMaxN = (int64_t(1) << 31) - 1;

struct RsPlan {
  int kw = 0;           // 16-byte words per row (K / 8)
  int rows = 1;         // R: rows per stage (1 where a row takes several chunks)
  int chunks = 1;       // C: stages per row
  int chunk_words = 0;  // words of a chunk; the last chunk of a row has kw - (C - 1) * chunk_words
  int parts = 1;        // warps per row: kRsStageWarps / R for R = 1, 2, 4, else 1 (a power of two)
  int parts_log2 = 0;
  int tile_rows = 1;    // TR: rows per epilogue tile, a multiple of R, TR * M tile <= kRsOutputsPerTile
  int groups = 4;       // rs_groups(M tile)
};

constexpr RsPlan rs_plan(int64_t k, int mt) {
  RsPlan p;
  p.groups = rs_groups(mt);
  p.kw = k / 8 > 1 ? int(k / 8) : 1;
  if (p.kw <= kRsStageWords) {
    p.rows = kRsStageWords / p.kw < kRsMaxStageRows ? kRsStageWords / p.kw : kRsMaxStageRows;
    p.chunks = 1;
    p.chunk_words = p.kw;
  } else {
    p.rows = 1;
    p.chunks = (p.kw + kRsStageWords - 1) / kRsStageWords;
    p.chunk_words = (p.kw + p.chunks - 1) / p.chunks;
  }
  p.parts = kRsStageWarps % p.rows == 0 ? kRsStageWarps / p.rows : 1;
  while ((1 << p.parts_log2) < p.parts) ++p.parts_log2;
  const int per_tile = kRsOutputsPerTile / (mt > 0 ? mt : 1);
  p.tile_rows = per_tile / p.rows * p.rows;
  if (p.tile_rows < p.rows) p.tile_rows = p.rows;
  return p;
}

// First row of block b of g over n rows (block b's rows: [rs_block_row(n, g, b), rs_block_row(n, g, b + 1))).
// n < 2^31 and g < 2^16: the product stays below 2^47.
constexpr int64_t rs_block_row(int64_t n, int64_t g, int64_t b) { return n * b / g; }

// Stages of a block with `rows` rows.
constexpr int rs_block_stages(const RsPlan& p, int rows) {
  return p.chunks > 1 ? rows * p.chunks : (rows + p.rows - 1) / p.rows;
}

// The group of consumer warps that multiplies stage s: by row where rows take several chunks (a lane's sums carry
// over the chunks of its row), else by stage.
constexpr int rs_owner(const RsPlan& p, int s) { return (p.chunks > 1 ? s / p.chunks : s) % p.groups; }

// Where stage s sits in its group's sequence of stages (0, 1, 2, ... in the order of s): its slot in the group's ring
// is seq % depth and its round seq / depth.
constexpr int rs_group_seq(const RsPlan& p, int s) {
  if (p.chunks > 1) {
    const int q = s / p.chunks;
    return q / p.groups * p.chunks + (s - q * p.chunks);
  }
  return s / p.groups;
}

// Stage s of a block with `rows` rows; rows counted from the block's first.
struct RsStage {
  int row = 0;          // first row of the stage
  int nrows = 0;        // rows in the stage
  int chunk = 0;        // which chunk of the row (C > 1)
  int word0 = 0;        // first word of each row in the stage
  int words = 0;        // words of each row in the stage
  bool row_end = true;  // the stage holds the last chunk of its rows
};

// Chunk `chunk` of row q where rows take several chunks, else stage q: rs_stage without its division.
constexpr RsStage rs_stage_of(const RsPlan& p, int rows, int q, int chunk) {
  RsStage st;
  if (p.chunks > 1) {
    st.row = q;
    st.nrows = 1;
    st.chunk = chunk;
    st.word0 = st.chunk * p.chunk_words;
    st.words = p.kw - st.word0 < p.chunk_words ? p.kw - st.word0 : p.chunk_words;
    st.row_end = st.chunk == p.chunks - 1;
  } else {
    st.row = q * p.rows;
    st.nrows = rows - st.row < p.rows ? rows - st.row : p.rows;
    st.words = p.kw;
  }
  return st;
}

constexpr RsStage rs_stage(const RsPlan& p, int rows, int s) {
  return p.chunks > 1 ? rs_stage_of(p, rows, s / p.chunks, s % p.chunks) : rs_stage_of(p, rows, s, 0);
}

// The last stage of epilogue tile t: the one that holds the last chunk of its last row.
constexpr int rs_tile_last_stage(const RsPlan& p, int rows, int t) {
  const int end = (t + 1) * p.tile_rows < rows ? (t + 1) * p.tile_rows : rows;  // rows of tiles 0..t
  return p.chunks > 1 ? end * p.chunks - 1 : (end + p.rows - 1) / p.rows - 1;
}
constexpr int rs_tiles(const RsPlan& p, int rows) { return (rows + p.tile_rows - 1) / p.tile_rows; }

// Group g's own stages in order, without visiting the other groups' (the consumers' walk): the k-th is stage s, the
// k-th of the group's sequence (rs_group_seq(s) == k), so its ring slot is k mod depth and its round k / depth.
struct RsGroupCursor {
  int k = 0;
  int s = 0;
  int q = 0;  // the stage's row (rows in several chunks), else s
  RsStage st;
};

constexpr RsGroupCursor rs_group_cursor(const RsPlan& p, int rows, int g) {
  RsGroupCursor c;
  c.q = g;
  c.s = p.chunks > 1 ? g * p.chunks : g;
  c.st = rs_stage_of(p, rows, c.q, 0);
  return c;
}

constexpr void rs_group_advance(const RsPlan& p, int rows, RsGroupCursor& c) {
  ++c.k;
  int chunk = 0;
  if (p.chunks > 1) {
    chunk = c.st.chunk + 1;
    if (chunk == p.chunks) {
      chunk = 0;
      c.q += p.groups;
    }
    c.s = c.q * p.chunks + chunk;
  } else {
    c.q += p.groups;
    c.s = c.q;
  }
  c.st = rs_stage_of(p, rows, c.q, chunk);
}

// Whether stage s ends an epilogue tile (TR is a multiple of R, and R = 1 where rows take several chunks), and which.
constexpr bool rs_tile_end(const RsPlan& p, int rows, const RsStage& st) {
  const int done = st.row + st.nrows;  // rows complete after the stage
  return st.row_end && (done % p.tile_rows == 0 || done == rows);
}
constexpr int rs_tile_rows(const RsPlan& p, int rows, int t) {
  return rows - t * p.tile_rows < p.tile_rows ? rows - t * p.tile_rows : p.tile_rows;
}

// What warp `wg` (0 .. kRsStageWarps - 1) of the owning group multiplies in a stage of `words` words per row: rows
// row0, row0 + row_step, ... below the stage's rows (none where row0 is not), each over words [w_lo, w_hi) of the
// row, as part `part`. Only w_lo and w_hi depend on the stage, and only where rows take several chunks.
struct RsWarpPart {
  int row0 = 0;
  int row_step = kRsStageWarps;
  int part = 0;
  int w_lo = 0, w_hi = 0;
};

constexpr RsWarpPart rs_warp_part(const RsPlan& p, int words, int wg) {
  RsWarpPart wp;
  if (p.parts > 1) {
    wp.row0 = wg / p.parts;
    wp.row_step = p.rows;  // one row only (nrows <= R)
    wp.part = wg % p.parts;
    wp.w_lo = (words * wp.part) >> p.parts_log2;
    wp.w_hi = (words * (wp.part + 1)) >> p.parts_log2;
  } else {
    wp.row0 = wg;
    wp.row_step = kRsStageWarps;
    wp.w_lo = 0;
    wp.w_hi = words;
  }
  return wp;
}

// The slot of (row in tile, part, m) in one epilogue buffer: [TR][parts][M tile].
constexpr int rs_slot(const RsPlan& p, int mt, int row_in_tile, int part, int mm) {
  return (row_in_tile * p.parts + part) * mt + mm;
}
constexpr int rs_slot_floats(const RsPlan& p, int mt) { return p.tile_rows * p.parts * mt; }
// Largest buffer over every K: R = 1 (kRsStageWarps parts) with TR = 256 / M tile rows.
constexpr int rs_max_slot_floats(int mt) { return kRsOutputsPerTile / mt * kRsStageWarps * mt; }

// The ring starts on a kSmemAlign boundary (core/smem_align.h). The dynamic window starts right after the kernel's
// static barriers (1104 bytes in: 80 bytes past a 128-byte line), and there every 16 KB bulk copy landed off the line:
// run 324 (graph replay, x cuBLASLt, two-stage groups) took m1 at 1 x 4096 x 4096 from 1.063 (run 320) to 1.171 and at
// 1 x 6144 x 4096 from 0.982 to 1.080 by this alignment alone.
// Dynamic shared memory of a launch: the alignment pad, ring, X (m rows of K), two slot buffers; 16-byte aligned pieces.
constexpr int64_t rs_smem_bytes(const RsPlan& p, int mt, int m, int group_stages_log2 = kRsGroupStagesLog2) {
  return kSmemAlign + (int64_t(p.groups) << group_stages_log2) * kRsStageBytes + int64_t(m) * p.kw * 16 +
         2 * int64_t(rs_slot_floats(p, mt)) * 4;
}
// The walk of a block's stages in order, one step at a time (no divisions; the kernel's producer uses it, the CPU
// tests check it against the closed forms above): the stage, the group that multiplies it and its place in that
// group's sequence. The consumers walk their own group's stages (RsGroupCursor) and find tile ends by
// rs_tile_last_stage.
struct RsCursor {
  int s = 0;
  RsStage st;
  int owner = 0;  // rs_owner
  int seq = 0;    // rs_group_seq
  int q = 0;      // the stage's row (rows in several chunks), else s: owner and seq follow from q and the chunk
};

constexpr void rs_cursor_finish(const RsPlan& p, RsCursor& c) {
  c.owner = c.q % p.groups;
  c.seq = p.chunks > 1 ? (c.q / p.groups) * p.chunks + c.st.chunk : c.q / p.groups;
}

constexpr RsCursor rs_cursor(const RsPlan& p, int rows) {
  RsCursor c;
  c.st = rs_stage(p, rows, 0);
  rs_cursor_finish(p, c);
  return c;
}

constexpr void rs_advance(const RsPlan& p, int rows, RsCursor& c) {
  ++c.s;
  const int chunk = p.chunks > 1 && c.st.chunk + 1 < p.chunks ? c.st.chunk + 1 : 0;  // 0: the next row or stage
  if (chunk == 0) ++c.q;
  c.st = rs_stage_of(p, rows, c.q, chunk);
  rs_cursor_finish(p, c);
}

constexpr int64_t rs_max_smem_bytes(int mt) {
  return kSmemAlign + (int64_t(rs_groups(mt)) << kRsGroupStagesLog2) * kRsStageBytes + kRsMaxXBytes +
         2 * int64_t(rs_max_slot_floats(mt)) * 4;
}
// 1 KB for the barriers and the 1 KB the driver reserves: one block in the 228 KB of an SM.
static_assert(rs_max_smem_bytes(1) + 2048 <= 228 * 1024 && rs_max_smem_bytes(4) + 2048 <= 228 * 1024, "shared memory");

// Words per lane that the consumers load before multiplying (skinny_rs_kernel.cuh): W's and M tile X's, 16 bytes
// each, in registers at once; 8 for the M tile 1 (a 4096-long row's half is 8 words per lane: one batch).
constexpr int rs_batch_words(int mt) { return mt == 1 ? 8 : 4; }
// Words of X per lane that a warp keeps in registers (rs_x_registers): its part of a 4096-long row's half.
constexpr int rs_xreg_words(int mt) { return rs_x_registers(mt) ? 8 : 1; }

// Whether a warp keeps its lanes' words of X in registers (rs_x_registers): M tile 1, rows in one stage (every stage's
// rows start at word 0) and the warp's part of a row in one batch, so that a lane multiplies the same words of X in
// every stage and every row it takes.
constexpr bool rs_x_in_registers(const RsPlan& p, int mt, const RsWarpPart& wp) {
  return rs_x_registers(mt) && p.chunks == 1 && wp.w_hi - wp.w_lo <= 32 * rs_xreg_words(mt);
}

// Blocks of a launch: one per SM, no more than rows.
constexpr int64_t rs_blocks(int64_t n, int sms) { return n < sms ? n : sms; }

}  // namespace tgemm::skinny
