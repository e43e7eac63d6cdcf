// skinny backend: configuration, generated names, declared limits and the launch-shape arithmetic.
// Host-only (no CUDA headers), so the partitioning math can be checked with a plain C++ compiler.
//
// Kernel shape (see skinny_kernel.cuh): Y^T[N, M] = W[N, K] · X[M, K]^T with mma.m16n8k16 (W is the 16-row A
// operand, X the 8-column B operand). A block is 8 warps; each warp owns 16 rows of W and a contiguous range
// of K "steps" (32 elements each). The block's warps are arranged WN x WK (WN * WK = 8): WN groups of 16 rows,
// WK slices of K. Blocks of one cluster (S blocks, S <= 8) take further K slices of the same rows.
// Total K slices T = WK * S ("split-K"), WK = min(T, max_wk(M tile)). Partials are reduced in a fixed order: warps through shared memory,
// cluster blocks through distributed shared memory. No atomics, no workspace (the persistent kernel's split of K across
// blocks, below, uses both; the sums stay in a fixed order).
#pragma once

#include <cstdint>
#include <string>

#include "backends/skinny/skinny_rs.h"
#include "tgemm/kernel.h"

namespace tgemm::skinny {

inline constexpr int kThreads = 256;       // 8 warps per block
inline constexpr int kBlocksPerSm = 2;     // resident blocks per SM: __launch_bounds__(256, 2), <= 40 KB smem
inline constexpr int kWarps = 8;
inline constexpr int kWarpRows = 16;       // W rows per warp (the mma's M)
inline constexpr int kBlockRowsMax = kWarpRows * kWarps;  // 128 rows when WK == 1
inline constexpr int kStepK = 32;          // K elements per warp step (4 lanes x 8 elements)
inline constexpr int kMaxCluster = 8;      // portable cluster size
inline constexpr int kPartPad = 4;         // floats of padding per row of the partial-sum tile (bank spread)

// K steps each warp keeps in flight (a ring of registers; W loads in flight per thread = 2 * depth, 16 bytes
// each). Bounded by the 128 registers per thread that two resident blocks leave.
constexpr int depth_for(int max_m, bool vec) { return !vec ? 2 : max_m <= 8 ? 8 : max_m <= 16 ? 4 : max_m <= 32 ? 6 : 3; }
// Most warps along K in one block. Warps of a block that share a K slice share its X chunks through L1; warps
// on different slices each pull X from L2, X bytes = M / (16 * WN) per W byte. Bigger M tiles keep WN larger
// (X <= ~W/2 of L2 traffic) and take the rest of the split across cluster blocks.
constexpr int max_wk_for(int max_m, bool vec) { return !vec || max_m <= 8 ? 8 : 64 / max_m; }
// Static shared memory per block: WK * MT * (128 / WK + 4) floats <= MT * (128 + 4 * 8) floats.
constexpr int part_floats(int max_m) { return max_m * (kBlockRowsMax + kPartPad * kWarps); }

// TMA variant (skinny_tma_kernel.cuh): W and X stream through a shared-memory ring filled by the bulk tensor copy
// engine. K is cut into 64-element units (one 128-byte row of a 128B-swizzled box); a stage holds WK units of
// the block's BR = 128 / WK rows plus the matching X boxes. 8 consumer warps + 1 producer warp.
inline constexpr int kTmaUnitK = 64;
inline constexpr int kTmaThreads = kThreads + 32;
inline constexpr int kTmaMaxWk = 2;         // more warps along K would make the X boxes as large as the W boxes
inline constexpr int kTmaBlocksPerSm = 3;   // 396 slots on 132 SMs: 28672- and 37888-row layers fit one wave
inline constexpr int kTmaMaxStages = 8;
// Dynamic shared memory per block (ring + 1 KB to align it to the swizzle's 1024-byte period): three blocks of
// this plus their static barriers and the 1 KB the driver reserves per block fit the 228 KB of an SM.
inline constexpr int kTmaSmemBytes = 73 * 1024;
// X rows per box: M rounded up to the 8-row mma block (rows past M are zero-filled by the copy engine).
constexpr int tma_x_rows(int m, int max_m) { return ((m + 7) / 8 * 8) < max_m ? (m + 7) / 8 * 8 : max_m; }
constexpr int tma_stage_bytes(int wk, int x_rows) { return wk * ((kBlockRowsMax / wk) * 128 + x_rows * 128); }
constexpr int tma_stages(int wk, int x_rows) {
  const int st = (kTmaSmemBytes - 1024) / tma_stage_bytes(wk, x_rows);
  return st < kTmaMaxStages ? st : kTmaMaxStages;
}
static_assert(tma_stages(kTmaMaxWk, 16) >= 2, "ring too shallow");
static_assert(part_floats(16) * 4 <= tma_stage_bytes(1, 8) * 2, "the partial tiles reuse the ring");

// Persistent warp-specialised variant (skinny_ws_kernel.cuh): one block per SM, a TMA ring of stages of 16 KB of W
// (depth: ws_default_stage_cap below, or TGEMM_SKINNY_WS_STAGES; at most what kWsSmemBytes holds), blocks
// walk row tiles of BR = 128 / WK rows with stride gridDim. K stays inside the block (WK warps along K; no cluster)
// except in the M tile 32 / 64 "auto" kernels' split across blocks (ws_auto_shape); the row tile is what balances the
// SMs. A stage holds WK consecutive 64-element units of the tile's BR rows: per W row WK x 128 contiguous bytes per
// stage.
inline constexpr int kWsMaxStages = 16;
inline constexpr int kWsSmemBytes = 200 * 1024;
inline constexpr int kWsMaxWk = 8;
// Ring depth by default (ws_default_stage_cap): kWsDefaultStages for M <= kWsShallowMaxM, kWsMidStages up to
// kWsMidMaxM, as deep as kWsSmemBytes allows (8-11 stages, 128-176 KB of W) above. Device call ws-2 (graph replay,
// decode shapes, 120 ws timings): 4 stages (64 KB of W in flight per SM) beat the full ring by > 2% on 60 of them and
// lost by > 2% on 14. At M <= 8 it won on the large layers (28672x4096 M=1 60.0 against 61.8 us, 37888x3584 65.8
// against 70.5, 4096x4096 11.4 against 12.8) and lost only at 4608x3584 (auto, ~1 us); at M = 16 it lost on every
// large layer (28672x4096 63.2 against 61.2, 3584x18944 41.8 against 39.4, 4096x14336 33.6 against 32.0). M = 9..15
// were not measured; they take M = 16's depth.
// ncu of the full ring at M = 1 (DRAM 77% against nvjet's 84-86%) and the M <= 8 results read as more bytes in flight
// than the DRAM needs only lengthening the queues.
// M = 9..16 take kWsMidStages. Runs 206-207 (docs/benchmarks.md; graph replay, the 12 decode layers, five ws kernels
// interleaved with cuBLASLt under TGEMM_SKINNY_WS_STAGES): at M = 16, 5 stages beat the full ring for every kernel
// (geometric means +0.8 to +1.9%; 3584x3584 sk4 1.149 -> 1.209x, 37888x3584 1.038 -> 1.050x), 4 and 6 did not
// (4 lost up to 3% on the large layers); at M <= 8, 5 stages matched 4 within +-1.2%, 6 lost 1-2% and 3 lost 3-6%.
inline constexpr int kWsDefaultStages = 4;
inline constexpr int kWsShallowMaxM = 8;
inline constexpr int kWsMidStages = 5;
inline constexpr int kWsMidMaxM = 16;
// The ring depth the persistent kernel asks for at M (before shared memory caps it; ws_stages).
constexpr int ws_default_stage_cap(int64_t m) {
  return m <= kWsShallowMaxM ? kWsDefaultStages : m <= kWsMidMaxM ? kWsMidStages : kWsMaxStages;
}
// With balanced tiles of TR < BR rows (ws_tile_rows) a stage carries TR / BR of the W bytes, so the ring takes
// BR / TR times the stages (rounded down; kWsMaxStages at most): the W bytes in flight of the BR-row ring. Run 245
// (graph replay, sk2 kernels, M = 1 / 8 / 16): 4608 x 3584 with 40-row tiles 0.97 -> 1.05x cuBLASLt at M = 1 with 6
// stages instead of 4, 7168 x 8192 with 56-row tiles best at 4 (6: -2.5%).
constexpr int ws_default_stage_cap(int64_t m, int tile_rows, int slot_rows) {
  const int64_t st = int64_t(ws_default_stage_cap(m)) * slot_rows / (tile_rows > 0 ? tile_rows : slot_rows);
  return st < kWsMaxStages ? int(st) : kWsMaxStages;
}
// W bytes per block prefetched into L2 before the PDL wait: one stage. Prefetching the whole ring (64 KB at M <= 8,
// up to 176 KB at M = 16) made the decode layers slower (docs/benchmarks.md runs 47-48; graph replay, 14 layers x
// 3 ws kernels, x cuBLASLt in the same process): against it, 16 KB +3.6% (geometric mean; 16 x 4096 x 4096 +10%),
// 0 KB +3.4%, 32 KB +3.0%, 128 / 256 KB -7% / -17%; plain launches +3.6% at 16 KB. Letting the next grid launch
// only once the producer has issued its last loads (64-256 KB prefetched) was slower still (-3% to -18%).
inline constexpr int kWsPrefetchBytes = 16 * 1024;
// Dynamic shared memory the persistent kernel asks for at least, so that it has its SM to itself: two blocks of it
// (plus the 1 KB the driver reserves per block) exceed the 228 KB of an SM. A 4-stage ring (M <= 8) needs ~70 KB,
// and under PDL the next grid's blocks were placed beside the running ones, two on some SMs and none on others, with
// fewer than 132 row tiles. Run 50 (graph replay, M = 4 / 8 / 16, 10 layers x 3 ws kernels) measured this floor
// +1.9% (geometric mean; 4 x 3584 x 18944 sk4 39.1 -> 37.1 us, 3584 x 3584 +9%), no shape slower beyond noise; a
// 6-stage ring (also alone on its SM) +1.6%, 6 stages with the floor +1.6%, PDL off -0.9%.
inline constexpr int kWsSoloSmemBytes = 116 * 1024;
static_assert(2 * (kWsSoloSmemBytes + int(kSmemAlign)) > 228 * 1024, "a second block would fit beside the first");
// M tile 64 (its wgmma consumers take 64 W rows each) has WK <= 2. M tile 32 takes WK up to 4 although every row tile
// re-reads all of X (M rows per BR rows of W; at WK = 4 as many X bytes as W bytes cross L2 and the ring): at
// N = 3584-4096 only 32-row tiles give every SM a tile, and they won (skinny_ws_kernel.cuh, run 69). WK = 8 leaves
// the ring 3 stages at M = 32 and was the fastest of its family only where cuBLASLt was faster still.
constexpr int ws_max_wk(int mt) { return mt <= 16 ? kWsMaxWk : mt <= 32 ? 4 : 2; }
// M tiles above 32 multiply with wgmma (skinny_ws_kernel.cuh, kWide), whose X operand needs an MT-row slot per unit
// (the host sizes the ring with it); M tiles 16 and 32 take the mma.sync path with M-row X boxes. The "wsg" kernels
// (Config::wg) are the wgmma path at M tiles 8 and 16: m64nMTk16 per warpgroup, so WK <= 2 as at M tile 64.
constexpr bool ws_wide(int mt, bool wg = false) { return wg || mt > 32; }
inline constexpr int kWsWideMaxWk = 2;
// The wgmma path's ring (skinny.cpp, SkinnyKernel::run): units TR rows apart (TR a multiple of 8), each unit's X in an
// MT-row slot, and upw units per warpgroup per stage (Config::upw, a template parameter: a loop of run-time length
// around wgmma serializes it, ptxas C7520), so that one 3D copy brings upw x WK x 128 contiguous bytes of each W row
// (the bare-ring probe, session 33: contiguous bytes per row are what count). A warpgroup's m64 read of the stage's
// last unit runs up to 128 - TR rows past the stage's W (TR >= 64 at WK = 1, >= 8 at WK = 2): at most 7 KB beyond what
// the X slots cover, so the ring keeps kWsWideSlack after its last stage. The consumers release a slot one stage late
// (one wgmma group in flight), so a ring of 2 stages runs them in lockstep with the copies: kWsWideStages at least
// where shared memory holds them (run 399: upw 2 and 4 at 2 stages took 1.3-1.5x the time of upw 1), and 2 always (the
// largest stage, upw 2 at 128 rows or WK 2 at 64, fits twice). Run 400 (graph replay, decode rows, 4 stages at least):
// upw 4 was behind upw 2 everywhere but 1 x 4096 x 4096 (10.67 against 10.95 us, the pick's 9.90), so it is not built.
inline constexpr int kWsWideSlack = 8 * 1024;
inline constexpr int kWsWideMaxUpw = 2;
inline constexpr int kWsWideStages = 4;
inline constexpr int kWsWideMinStages = 2;
constexpr int ws_wide_stage_bytes(int units, int tile_rows, int mt) { return units * (tile_rows + mt) * 128; }
// The static partial tile of the persistent kernel: WK x MT x (BR + pad) floats for its largest WK.
constexpr int ws_part_floats(int mt) { return mt * (kBlockRowsMax + kPartPad * ws_max_wk(mt)); }
// Dynamic shared memory for the ring: what the M tile's partial tile leaves of the M = 16 kernel's total, so that
// ring + partial tile + barriers stay inside the 227 KB a block may have.
constexpr int ws_smem_bytes(int mt) { return kWsSmemBytes - 4 * (ws_part_floats(mt) - ws_part_floats(16)); }
// X box of a unit: exactly M rows (no L2 traffic for padding rows), placed in a 1024-byte aligned slot per 8 rows.
constexpr int ws_stage_bytes(int wk, int m) { return wk * ((kBlockRowsMax / wk) * 128 + (m + 7) / 8 * 1024); }
constexpr int ws_stages(int wk, int m, int mt = 16) {
  const int st = (ws_smem_bytes(mt) - 1024) / ws_stage_bytes(wk, m);
  return st < kWsMaxStages ? st : kWsMaxStages;
}
static_assert(ws_stages(kWsMaxWk, 16) >= 4, "ring too shallow");
static_assert(ws_stages(2, 64, 64) >= 4 && ws_stages(4, 32, 32) >= 4, "ring too shallow");
// Ring, partial tile and barriers of one block inside the 227 KB a block may have (1024 covers the barriers).
constexpr bool ws_block_fits(int mt) { return ws_smem_bytes(mt) + 4 * ws_part_floats(mt) + int(kSmemAlign) <= 227 * 1024; }
static_assert(ws_block_fits(8) && ws_block_fits(16) && ws_block_fits(32) && ws_block_fits(64), "shared memory per block");
static_assert(kWsWideMinStages * ws_wide_stage_bytes(kWsWideMaxUpw, kBlockRowsMax, 16) + kWsWideSlack + int(kSmemAlign) <=
                  ws_smem_bytes(16) &&
              kWsWideMinStages * ws_wide_stage_bytes(2 * kWsWideMaxUpw, kBlockRowsMax / 2, 16) + kWsWideSlack +
                      int(kSmemAlign) <= ws_smem_bytes(16),
              "the wgmma path's largest stages");
static_assert(ws_smem_bytes(64) >= kWsSoloSmemBytes, "the opt-in covers the solo floor");

struct Config {
  DType in = DType::bf16;  // X and W (bf16 or fp16)
  int max_m = 8;           // M tile: 8, 16, 32 or 64 (runtime M <= max_m)
  int split_k = 0;         // total K slices T (1, 2, 4, ... 64); 0 = chosen per problem
  bool vec = true;         // 16-byte loads (aligned, ld % 8 == 0); false = element loads, any alignment
  bool tma = false;        // W and X through the bulk-copy ring (skinny_tma_kernel.cuh); implies vec
  bool ws = false;         // persistent variant (skinny_ws_kernel.cuh); implies tma; split_k = WK (1..8)
  bool wg = false;         // ws with wgmma consumers at M tile 8 or 16 (ws_wide); WK <= 2
  int upw = 1;             // wg: units per warpgroup per stage (1 or 2; kWsWideSlack)
  bool rs = false;         // row-stream variant (skinny_rs_kernel.cuh, skinny_rs.h): M tile 1, 2 or 4, no split
  int rs_blocks = 0;       // row-stream grid: at most this many blocks (0: one per SM; skinny.cpp, kRsBlockCaps)

  // The TMA ring's bytes in flight per block (~4 stages of 16 KB of W) expressed as the register ring's depth
  // (8 warps x 1 KB per step) for the time model.
  int depth() const { return tma ? 8 : depth_for(max_m, vec); }
  bool wide() const { return ws && ws_wide(max_m, wg); }
  int max_wk() const { return ws ? (wide() ? kWsWideMaxWk : ws_max_wk(max_m)) : tma ? kTmaMaxWk : max_wk_for(max_m, vec); }
  // The ws kernel's fixed splits are its WK (the split across blocks is "auto" only).
  int max_split() const { return rs ? 1 : ws ? max_wk() : max_wk() * kMaxCluster; }

  // skinny_bf16_m8_sk4_i64, skinny_fp16_m16_skauto_i64, skinny_bf16_m64_skauto_scalar_i64, skinny_bf16_m4_rs_i64,
  // skinny_bf16_m8_wsg_sk2_i64, skinny_bf16_m16_wsg2_sk2_i64
  // skinny_bf16_m1_rs_b128_i64
  std::string name() const {
    std::string s = "skinny_";
    s += in == DType::fp16 ? "fp16" : "bf16";
    s += "_m" + std::to_string(max_m);
    if (rs) return s + "_rs" + (rs_blocks > 0 ? "_b" + std::to_string(rs_blocks) : std::string()) + "_i64";
    if (ws) s += wg ? "_wsg" + (upw > 1 ? std::to_string(upw) : std::string()) : "_ws";
    else if (tma) s += "_tma";
    s += split_k > 0 ? "_sk" + std::to_string(split_k) : std::string("_skauto");
    if (!vec) s += "_scalar";
    s += "_i64";
    return s;
  }

  Limits limits() const {
    Limits l;
    l.y_index_bits = l.x_index_bits = l.w_index_bits = 64;  // every offset is formed in int64
    l.ld_multiple = vec ? 8 : 1;  // 16-byte rows
    l.ptr_align = vec ? 16 : 2;
    l.bias_align = 2;             // an fp32 bias that is only 2-byte aligned is read as two halves
    // TMA: int32 coordinates (K, N < 2^31), row strides of W and X multiples of 16 bytes (ld % 8 == 0 above)
    // and < 2^40, base addresses 16-byte aligned (ptr_align above); the generic check words each refusal.
    l.uses_tma = tma;
    l.min_m = 1;
    l.max_m = max_m;
    // blockIdx.x = row_tile * S + rank < 2^31; a row tile is at least 16 rows (WK = 8), S <= 8. The persistent kernel's
    // balanced tiles may have 8 rows, but it walks its tiles in a loop on at most one block per SM.
    l.tile_n = ws ? kWarpRows : tma ? kBlockRowsMax / kTmaMaxWk : kWarpRows;
    l.max_n_tiles = (int64_t(1) << 31) / kMaxCluster - 1;
    l.in_dtypes = dtype_bit(in);
    l.out_dtypes = 0b111;
    l.bias_same_as_input = true;
    l.bias_fp32 = true;
    l.k_zero = false;
    if (rs) {
      // 1D bulk copies of whole 16-byte words (K % 8 == 0; ld and pointers as above), X whole in shared memory.
      // No tensor map and no tiles on a grid dimension: one block per SM takes a range of rows (offsets in int64; a
      // block's rows, stages and slots in int: N < 2^31).
      l.uses_tma = false;
      l.k_multiple = 8;
      l.max_k = kRsMaxXBytes / (2 * max_m);
      l.max_n = kRsMaxN;
      l.tile_n = 1;
      l.max_n_tiles = kNoLimit;
    }
    return l;
  }
};

// Kernel arguments (one struct, passed by value).
struct Params {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* bias = nullptr;
  void* y = nullptr;
  int64_t ldx = 0, ldw = 0, ldy = 0;  // elements
  int64_t n = 0, k = 0;
  int64_t k_steps = 0;  // ceil(k / 32)
  int64_t sps = 0;      // K steps per slice
  int m = 0;            // 1 .. MT
  int wk_log2 = 0;      // warps along K per block
  int s = 1;            // blocks per cluster along K
  int out_dtype = 0;    // DType: 0 bf16, 1 fp16, 2 fp32
  int bias_kind = 0;    // 0 none, 1 input dtype, 2 fp32
  // Persistent kernel split across s blocks (s > 1): per-tile arrival counters, zero at the launch and left zero
  // (the stream's ZeroedCounters, or the workspace's after a memset), and the fp32 partial tiles [row tile][split][m][BR].
  int* counters = nullptr;
  float* partials = nullptr;
};

// The row-stream kernels' argument (skinny_rs_kernel.cuh).
struct RsParams {
  Params op;  // x, w, bias, y, their leading dimensions, n, k, m, out_dtype, bias_kind (the split fields unused)
  RsPlan plan;
  int group_stages_log2 = kRsGroupStagesLog2;  // each group's ring: 1 << this stages (0 or 1)
  int64_t blocks = 1;  // G: the grid; block b streams rows [rs_block_row(n, G, b), rs_block_row(n, G, b + 1))
  int w_evict_first = 0;  // 1: W's bulk copies carry an L2 evict_first policy (run_rs sets it: rs_w_evict_first)
};

// How one launch is laid out for (N, K, T).
struct LaunchShape {
  int split = 1;          // T = WK * S
  int wk_log2 = 0;        // warps along K per block: WK = 1 << wk_log2; WN = 8 >> wk_log2
  int s = 1;              // blocks along K (cluster size)
  int block_rows = 128;   // W rows per block = 16 * WN
  int64_t k_steps = 0;    // ceil(K / 32)
  int64_t sps = 0;        // K steps per slice: slice i covers [i * sps, min((i + 1) * sps, k_steps))
  int64_t row_tiles = 0;  // ceil(N / block_rows)
  int64_t blocks = 0;     // row_tiles * s
};

inline int ilog2(int v) {
  int r = 0;
  while ((1 << (r + 1)) <= v) ++r;
  return r;
}

// The split's layout, K aside (both kernels count K in their own units): T a power of two, WK = min(T, max_wk) warps
// along K, S = T / WK cluster blocks, the block's W rows and the grid.
inline LaunchShape split_layout(int64_t n, int split, int max_wk) {
  LaunchShape sh;
  sh.split = split;
  const int wk = split < max_wk ? split : max_wk;
  sh.wk_log2 = ilog2(wk);
  sh.s = split / wk;
  sh.block_rows = kBlockRowsMax >> sh.wk_log2;
  sh.row_tiles = (n + sh.block_rows - 1) / sh.block_rows;
  sh.blocks = sh.row_tiles * sh.s;
  return sh;
}

// T in [1, max_wk * 8]; K in 32-element steps, split evenly over the T slices.
inline LaunchShape launch_shape(int64_t n, int64_t k, int split, int max_wk) {
  LaunchShape sh = split_layout(n, split, max_wk);
  sh.k_steps = (k + kStepK - 1) / kStepK;
  sh.sps = (sh.k_steps + split - 1) / split;
  return sh;
}

// The TMA kernel's launch (skinny_tma_kernel.cuh): K in 64-element units; WK = min(T, 2) warps along K, S = T / WK
// cluster blocks. Here k_steps counts 64-element units and sps is the units of one block, a multiple of WK so the
// S blocks' ranges [rank * sps, (rank + 1) * sps) never share a stage.
inline LaunchShape tma_launch_shape(int64_t n, int64_t k, int split) {
  LaunchShape sh = split_layout(n, split, kTmaMaxWk);
  const int wk = split < kTmaMaxWk ? split : kTmaMaxWk;
  sh.k_steps = (k + kTmaUnitK - 1) / kTmaUnitK;
  const int64_t per_block = (sh.k_steps + sh.s - 1) / sh.s;
  sh.sps = (per_block + wk - 1) / wk * wk;
  return sh;
}

// The TMA kernel's "auto" split: the smallest that gives every SM a block. Each block keeps ~64 KB in flight
// whatever its share of K, so beyond one block per SM a larger split adds only cluster reductions and waves.
inline int tma_auto_split(int64_t n, int64_t k, int sms) {
  const int64_t units = (k + kTmaUnitK - 1) / kTmaUnitK;
  int split = 1;
  while (split < kTmaMaxWk * kMaxCluster && units >= 2 * split && tma_launch_shape(n, k, split).blocks < sms) split *= 2;
  return split;
}

// Balanced row tiles: the rows of a tile (TR <= BR = 128 / WK) that spread N over the rounds of BR-row tiles as evenly
// as the SMs allow, so that no block streams more rows than it must. 4608 rows in 64-row tiles are 72 tiles (60 SMs
// idle), in 16-row tiles 288 (3 rounds for 24 SMs, 48 rows where the mean is 35); 35-row tiles are 132 tiles of one
// round. The slot layout stays BR rows (the rows past TR are the next unit's or stale, and feed only accumulator rows
// that are never stored, as the X rows past M do), so only the W box, the tile's first row, the stores and the
// swizzle phase of a packed unit change (skinny_ws_kernel.cuh). TR is a multiple of `align`: 8 for the wgmma M tile,
// whose descriptors need each unit on a 1024-byte swizzle period; 4 for ldmatrix (skinny.cpp, ws_balance_align: 35-row
// tiles ran 2-3% slower than 36-row ones). At least max(8, BR / 2) rows: more, smaller tiles than that would add
// per-tile cost (session 21's 8-row tiles).
// Only up to M = 16 (kWsBalanceMaxM): every tile re-reads all of X (M rows per TR rows of W), so more tiles cost X
// traffic. Run 251: 32 x 3584 x 3584 on the m32 auto kernel 1.108 -> 1.077x cuBLASLt with 28-row tiles, while at
// M <= 16 the same tiles gained (16 x 3584 x 18944 1.04 -> 1.09x, run 247; 16 x 1280 x 8192 m16 auto 1.08 -> 1.18x).
inline constexpr int64_t kWsBalanceMaxM = 16;
inline int ws_tile_rows(int64_t n, int br, int sms, int align = 1) {
  const int64_t per_round = int64_t(br) * sms;
  const int64_t rounds = (n + per_round - 1) / per_round;
  int64_t tr = ((n + rounds * sms - 1) / (rounds * sms) + align - 1) / align * align;
  const int64_t lo = br / 2 > 8 ? br / 2 : 8;
  if (tr < lo) tr = lo;
  if (tr > br) tr = br;
  return int(tr);
}

// The persistent kernel's layout for (N, K) with WK warps along K: tiles of BR = 128 / WK rows, K in 64-element
// units (k_steps), grid = min(tiles, sms) blocks (blocks = grid, row_tiles = tiles; s = 1, sps unused).
// balance_align > 0: balanced tiles (ws_tile_rows) of a multiple of that many rows.
inline LaunchShape ws_launch_shape(int64_t n, int64_t k, int wk, int sms, int balance_align = 0) {
  LaunchShape sh = split_layout(n, wk, kWsMaxWk);
  sh.k_steps = k / kTmaUnitK + (k % kTmaUnitK != 0);  // no k + 63: k may be any int64 here
  sh.sps = sh.k_steps;
  if (balance_align > 0 && n > 0 && sms > 0) {
    sh.block_rows = ws_tile_rows(n, sh.block_rows, sms, balance_align);
    sh.row_tiles = (n + sh.block_rows - 1) / sh.block_rows;
  }
  sh.blocks = sh.row_tiles < sms ? sh.row_tiles : sms;
  return sh;
}

// The persistent kernel's "auto" WK. Each block streams rounds x BR rows of K; the SMs share the DRAM rate, and an
// SM whose neighbours are idle is assumed to pull at most kWsIdleBoost times its fair share. Time in units of
// (fair-share rate): rounds * BR / min(kWsIdleBoost, sms / active). Among WKs within 3% of the best, the largest
// tile (least X traffic: an X box of M rows per BR rows of W).
// kWsIdleBoost was 1.5 until run 51's profile (60 decode shapes, every fixed WK timed with the one-stage prefetch
// and the solo floor): with 1.5 the auto choice took 1.6% longer than the best fixed WK (geometric mean; 6144x4096
// WK 2 at 17.0 us against WK 8 at 14.9, 4608x3584 likewise: 96 and 72 blocks of 64 rows pull less than 1.375 and
// 1.5 times a fair share); any value in 1.0-1.25 gives 0.14%.
inline constexpr double kWsIdleBoost = 1.25;
inline int ws_auto_wk(int64_t n, int64_t k, int sms, int max_wk = kWsMaxWk) {
  double t[4];
  double best = 1e30;
  const int count = max_wk >= 8 ? 4 : max_wk >= 4 ? 3 : max_wk >= 2 ? 2 : 1;
  for (int i = 0; i < count; ++i) {
    const LaunchShape sh = ws_launch_shape(n, k, 1 << i, sms);
    const int64_t rounds = (sh.row_tiles + sms - 1) / sms;
    double speed = double(sms) / double(sh.blocks);
    if (speed > kWsIdleBoost) speed = kWsIdleBoost;
    t[i] = double(rounds) * double(sh.block_rows) / speed;
    if (t[i] < best) best = t[i];
  }
  for (int i = 0; i < count; ++i)
    if (t[i] <= best * 1.03) return 1 << i;
  return 1;
}

// Split across blocks (the "auto" ws kernels of M tiles 32 and 64 only; skinny.cpp says why not M tile 16). Where a WK leaves fewer row tiles than SMs (4096x4096: 32 tiles of
// 128 rows), S blocks take a tile's K in S ranges of whole stages; each writes its fp32 M x BR partial tile to the
// workspace, and the last to arrive at the tile's counter sums the S partials in split order (same bits whichever
// block arrives last), adds bias and stores.
inline constexpr int kWsMaxSplits = 16;
inline constexpr int kWsMinSplitUnits = 4;  // 256 of K per split at least: below that the ring barely fills
// Only K >= 8192 splits. Device call ws-4 (graph replay, wgmma kernels, split on / off, M = 1..64): the split won on
// every K >= 8192 layer (1280x8192 M=1 12.3 against 25.2 us, M=64 22.1 against 27.5; 3584x18944 M=1 40.8 against
// 56.8, M=64 48.4 against 59.4; 4096x14336 M=1 34.9 against 44.0, M=64 43.3 against 46.5) and lost on every K <= 4096
// one (3584x3584, 4096x4096, 4608x3584: 1-2 us at M = 1, up to 22 us at M = 64). Two costs grow with M and do not
// shrink with K: the last block's sum walks its 32 outputs per thread with one L2 round trip each, and the counter
// memset before the launch keeps the kernel from starting under the previous one (PDL). Run 53 (session 6), after the
// sum's loads were batched 8 outputs at a time, a one-stage prefetch and the solo floor: splitting at every K
// (TGEMM_SKINNY_WS_MIN_SPLIT_K=1) still lost on every K <= 4096 layer at M = 32 / 64 (32 x 4096 x 4096 m32: 14.4 ->
// 17.0 us; 64 x 4608 x 3584 m64: 16.3 -> 23.0) and changed nothing at K >= 8192. So the sum's round trips were not
// the cost; the memset (no PDL overlap) is the suspect left, not measured alone. Run 80 (session 9) measured it: with
// the stream's zeroed counters instead of the memset every split launch took ~3 us less (1x1280x8192 m32 12.1 -> 9.1,
// 32x1280x8192 13.9 -> 10.9, 64x4096x14336 m64 40.1 -> 37.4), and splitting at every K helped M tile 64 at 3584x3584
// and 4096x4096 (M = 1: 12.6 -> 10.4, 14.3 -> 12.0) but not enough to beat M tile 16 / 32 or cuBLASLt there, and lost
// at 4608x3584 with bias (M = 64: 16.0 -> 19.7). Splitting where the row tiles outnumber the SMs (balancing the
// rounds: 6144x4096 at M = 32, 7168x8192, 3584x18944; runs 81-82) was 20-60% slower, with or without a deeper ring.
inline constexpr int64_t kWsMinSplitK = 8192;

// The persistent kernel with S blocks along K: work items (tile, split) walked with stride gridDim; sps = units per
// split, a multiple of WK so no stage straddles two splits; every split non-empty.
inline LaunchShape ws_split_shape(int64_t n, int64_t k, int wk, int splits, int sms) {
  LaunchShape sh = ws_launch_shape(n, k, wk, sms);
  if (splits <= 1) return sh;
  const int64_t per = (sh.k_steps + splits - 1) / splits;
  sh.s = splits;
  sh.split = wk * splits;
  sh.sps = (per + wk - 1) / wk * wk;
  const int64_t items = sh.row_tiles * splits;
  sh.blocks = items < sms ? items : sms;
  return sh;
}

// Time of a ws launch in the units of ws_auto_wk's model (rounds x rows x units of K over the SM's speed), plus, with
// S > 1, the M x BR fp32 partial tile each item writes and the last block reads back (M BR / 32 128-byte rows).
// The M tile 32 / 64 kernels keep the idle-SM boost of 1.5 their split choice was measured with (device call ws-4);
// kWsIdleBoost's refit on M <= 16 would turn 1280x8192's five splits into six, which nobody has timed.
inline constexpr double kWsSplitIdleBoost = 1.5;
inline double ws_model(const LaunchShape& sh, int64_t m, int sms) {
  const int64_t items = sh.row_tiles * sh.s;
  const int64_t rounds = (items + sms - 1) / sms;
  double speed = double(sms) / double(sh.blocks);
  if (speed > kWsSplitIdleBoost) speed = kWsSplitIdleBoost;
  double t = double(rounds) * double(sh.sps) * double(sh.block_rows) / speed;
  if (sh.s > 1) t += double(rounds) * double(m) * double(sh.block_rows) / 32.0;
  return t;
}

// The "auto" ws kernels' layout: WK in 1..max_wk and S in 1..kWsMaxSplits (S > 1 only for K >= kWsMinSplitK and
// where that WK has fewer row tiles than SMs). Among layouts within 3% of the model's best: S = 1 first (no workspace, no second pass), then
// the smallest S, then the largest tile (least X traffic, fewest copies per byte).
inline LaunchShape ws_auto_shape(int64_t m, int64_t n, int64_t k, int max_wk, int sms, int64_t min_split_k = kWsMinSplitK) {
  if (n < 1 || k < 1 || n > (int64_t(1) << 32) || k > (int64_t(1) << 32))  // beyond TMA; can_implement refuses
    return ws_launch_shape(1, 1, 1, sms);
  struct Cand {
    LaunchShape sh;
    double t;
  };
  Cand c[4 * kWsMaxSplits];
  int count = 0;
  double best = 1e300;
  const int max_s = k >= min_split_k ? kWsMaxSplits : 1;
  for (int wk = 1; wk <= max_wk && wk <= kWsMaxWk; wk *= 2)
    for (int s = 1; s <= max_s; ++s) {  // any S: tiles x S items can fill the rounds where powers of 2 cannot
      const LaunchShape sh = ws_split_shape(n, k, wk, s, sms);
      if (s > 1 && (sh.row_tiles >= sms || sh.sps < kWsMinSplitUnits || (s - 1) * sh.sps >= sh.k_steps)) break;
      c[count] = {sh, ws_model(sh, m, sms)};
      if (c[count].t < best) best = c[count].t;
      ++count;
    }
  int pick = -1;
  for (int i = 0; i < count; ++i) {
    if (c[i].t > best * 1.03) continue;
    if (pick < 0 || c[i].sh.s < c[pick].sh.s || (c[i].sh.s == c[pick].sh.s && c[i].sh.wk_log2 < c[pick].sh.wk_log2))
      pick = i;
  }
  return c[pick].sh;
}

// Workspace of a ws launch: the per-tile counters (rounded to 256 bytes), then the partial tiles.
inline int64_t ws_counter_bytes(const LaunchShape& sh) { return (sh.row_tiles * 4 + 255) / 256 * 256; }
inline int64_t ws_workspace_bytes(const LaunchShape& sh, int64_t m) {
  if (sh.s <= 1) return 0;
  return ws_counter_bytes(sh) + sh.row_tiles * sh.s * m * sh.block_rows * 4;
}

// Whether the untuned default hands M <= 16 to the persistent kernel (auto WK) before the register ring: layers of
// at least 1M weights. Until session 6 only layers of 32M weights or more whose row tiles filled every round of the
// SMs to within 5% (device calls ws-1 / ws-2, the whole ring prefetched before the PDL wait, two blocks per SM
// possible). Run 51's profile, after the one-stage prefetch and the solo floor: the ws kernel's auto WK beat the
// register ring's auto split on 53 of the 60 decode shapes (M = 1-16, 8M-136M weights; geometric mean 1.09x, e.g.
// 3584x3584 1.25x, 1280x8192 1.16x, 8192x1024 1.17x), and lost by at most 5% (4608x3584; 7168x8192 1-4%). Run 411
// (session 49) timed the layers of 1M-6M weights at M = 1 / 8 / 16 (1024x1024 ... 3072x2048, 15 shapes): the ws
// kernel read 1.005-2.09x cuBLASLt in graph replay against the register ring's 0.61-1.20x, and 0.915-1.83x against
// 0.65-1.26x in plain launches, level or ahead on every shape in both modes; with this threshold (run 412) the 18
// untuned layers of 1M-8M weights read 1.252x in graph replay and 1.221x plain (geometric means). Below 1M weights the
// ring's shorter start wins (run 410, 1 x 256 x 64: 1.42 against ws sk8's 2.21 us in graph replay, 5.5 against 7.0
// plain).
inline bool ws_preferred(int64_t m, int64_t n, int64_t k) {
  // Past TMA's 2^32 dimensions the kernel cannot run anyway (can_implement says so); below that the product is
  // formed in double, so no size a caller passes can overflow here (UBSan, HostileProblems.MakePlanNeverCrashes).
  if (m < 1 || m > 16 || n < 1 || k < 1 || n > (int64_t(1) << 32) || k > (int64_t(1) << 32)) return false;
  return double(n) * double(k) >= double(int64_t(1) << 20);
}

// Crude time model (microseconds) of one launch on an H200-class part, used only to pick T when the kernel's
// split is "auto". Streams W in waves of resident blocks; a wave runs at the lesser of the DRAM bandwidth and
// what its loads in flight can sustain (Little's law), and no faster than its warps' dependent round trips.
inline double model_time_us(int64_t m, int64_t n, int64_t k, int split, int max_wk, int sms, int blocks_per_sm,
                            int depth) {
  constexpr double kBw = 4.0e6;        // bytes per microsecond (~4 TB/s read)
  constexpr double kLatLoaded = 1.0;   // us, DRAM latency under load
  constexpr double kLatIdle = 0.6;     // us, per dependent round trip
  constexpr double kEpilogue = 0.25;   // us, smem reduction + stores
  constexpr double kCluster = 0.25;    // us, two cluster barriers + DSMEM reduction
  constexpr double kSmBw = 0.05e6;     // bytes per microsecond one SM sustains (~50 GB/s, ~1.6x its fair share)
  constexpr double kSmInflight = 96.0 * 1024;  // bytes one SM keeps in flight at most
  constexpr double kL2Bw = 6.0e6;      // bytes per microsecond L2 -> SMs (W once plus X per K slice)
  const LaunchShape sh = launch_shape(n, k, split, max_wk);
  if (sh.s > kMaxCluster) return 1e30;
  const int64_t rows = sh.block_rows < n ? sh.block_rows : n;
  const int64_t block_k = sh.sps * kStepK * (int64_t(1) << sh.wk_log2);  // K elements one block covers
  const double block_bytes = double(rows) * double(block_k < k ? block_k : k) * 2.0;
  const int64_t per_warp_steps = sh.sps;
  const double iters = double((per_warp_steps + depth - 1) / depth);
  const double warp_inflight = 1024.0 * double(per_warp_steps < depth ? per_warp_steps : depth);
  const int64_t cap = int64_t(sms) * (blocks_per_sm > 0 ? blocks_per_sm : 1);
  auto wave_time = [&](int64_t wave) {
    const int64_t active_sms = wave < sms ? wave : sms;  // blocks spread one per SM first
    double inflight = double(wave) * kWarps * warp_inflight;
    if (inflight > double(active_sms) * kSmInflight) inflight = double(active_sms) * kSmInflight;
    double bw = inflight / kLatLoaded;
    if (bw > double(active_sms) * kSmBw) bw = double(active_sms) * kSmBw;
    if (bw > kBw) bw = kBw;
    double tw = double(wave) * block_bytes / bw;
    const double x_per_w = double(m) / double(kWarpRows * (kWarps >> sh.wk_log2));
    const double tl2 = double(wave) * block_bytes * (1.0 + x_per_w) / kL2Bw;
    if (tw < tl2) tw = tl2;
    if (tw < iters * kLatIdle) tw = iters * kLatIdle;
    return tw + kEpilogue + (sh.s > 1 ? kCluster : 0.0);
  };
  const int64_t full = sh.blocks / cap, rest = sh.blocks % cap;
  double t = double(full) * (full > 0 ? wave_time(cap) : 0.0);
  if (rest > 0) t += wave_time(rest);
  return t;
}

// The split the "auto" kernels use. Among the splits within 5% of the model's best, the smallest one that gives
// every SM a block; if none does, the one with the most blocks.
inline int auto_split(int64_t m, int64_t n, int64_t k, int max_wk, int sms, int blocks_per_sm, int depth) {
  const int64_t k_steps = (k + kStepK - 1) / kStepK;
  double t[16];
  int count = 0;
  double best = 1e30;
  for (int split = 1; split <= max_wk * kMaxCluster && (split == 1 || k_steps >= split); split *= 2, ++count) {
    t[count] = model_time_us(m, n, k, split, max_wk, sms, blocks_per_sm, depth);
    if (t[count] < best) best = t[count];
  }
  int pick = 0;
  int64_t pick_blocks = -1;
  for (int i = 0; i < count; ++i) {
    if (t[i] > best * 1.05) continue;
    const int64_t blocks = launch_shape(n, k, 1 << i, max_wk).blocks;
    if (blocks >= sms) return 1 << i;
    if (blocks > pick_blocks) {
      pick_blocks = blocks;
      pick = i;
    }
  }
  return 1 << pick;
}

}  // namespace tgemm::skinny
