// skinny backend: the persistent, warp-specialised variant. Included by the per-dtype instantiation files only.
//
// Why another kernel: Nsight Compute (run 22, 1x28672x4096) puts cuBLASLt's nvjet kernel at 85-86% of DRAM peak
// with one persistent block per SM and a 12-stage (~192 KB) TMA ring, against 75% for the register ring (224
// blocks, <= 32 KB of loads in flight per block); skinny_tma (3 blocks per SM of 4 stages, 224 blocks spread 1 or 2
// per SM) was no faster. Here each SM runs one block, and the block walks row tiles tile = blockIdx.x + i * gridDim.x,
// so its producer never stops streaming at a tile edge and small row tiles (32 rows at 28672x4096: 896 tiles, 7
// rounds) spread the rows over the SMs to within 3%. The ring depth is a launch parameter (skinny_config.h,
// ws_default_stage_cap): at M <= 8 a 4-stage ring was measured fastest, at M = 16 a 5-stage one.
//
// Product and fragments as in skinny_tma_kernel.cuh (128B-swizzled boxes, ldmatrix, mma.m16n8k16). A tile is BR =
// 128 / WK rows; its K is cut into 64-element units, and stage j of a tile holds units j * WK + wk (wk < WK) of the
// tile's rows, consumed by the warps with that wk (WN = 8 / WK warps of 16 rows each). X boxes carry exactly M rows:
// ldmatrix also reads the stale rows M..8*NB-1 of the slot, which only feed accumulator columns that are never
// stored (the mma's columns are independent).
//
// Copies per stage. Device call ws-1 (graph replay, 28672x4096, unit-by-unit copies) ranked WK = 1 / 2 (one or two
// 2D W boxes of 128 / 64 rows per stage) ahead of WK = 4 and far ahead of WK = 8 (eight 16-row boxes: 79.9 us
// against 61.2 for WK = 4) once the row-tile imbalance is taken out, so the number of bulk copies per byte matters.
// With whole-stage copies (ws-2) WK = 8 came to 63.0 us and 1280x8192 (auto, WK = 8) from 13.0 to 10.7 us; WK = 4
// was within 3% either way (28672x4096 61.8 with, 60.8 without; 37888x3584 70.2 with, 68.0 without). Stages made of WK full units are
// therefore fetched with two 3D copies (tp.w3, tp.x3: [unit][row][64] views of W and X): W lands as the same
// [WK][BR][64] layout, X as [WK][M][64] rows packed one after another (row r = wk * M + m, swizzled by r & 7). A
// stage that reaches the partial unit at the end of K is fetched unit by unit with the 2D maps, which zero-fill
// past K; there X unit wk sits in its own 1024-byte slot.
//
// Balanced row tiles (M <= 16, K in one block; skinny_config.h, ws_tile_rows): a tile may have TR < BR rows, so that
// N spreads over the SMs' rounds (7168 rows: 128 tiles of 56 rather than 112 of 64). The W box is TR rows; a 3D copy
// packs the stage's units TR rows apart (row r of unit wk is the box's row wk * TR + r, swizzled by its & 7, as the
// packed X rows are), a unit-by-unit one leaves them in their BR-row slots. The consumers read BR rows either way:
// those past TR belong to the next unit or are stale, and feed only accumulator rows that are never stored. The wgmma
// M tile takes TR a multiple of 8, so that each unit's descriptor starts on a 1024-byte swizzle period.
//
// Reduction, fixed order, per tile: the consumer warps write their 16 x M partials to shared memory, sum them in
// warp order (wk = 0, 1, ...), add bias and store. Only the 256 consumer threads take part (named barrier 1), so
// the producer keeps filling the ring with the next tile meanwhile.
//
// Split across blocks (p.s = S > 1, skinny_config.h ws_split_shape): the work items are (tile, split) pairs, item =
// tile * S + split, each covering p.sps units of K. A block's sum of an item goes to its slot of p.partials as fp32
// (M x BR, L2 only), then one thread counts the item in p.counters[tile] (zero at the start; the last arrival resets
// it); the block that counts S sums the S slots in split order, adds bias and stores, so the bits do not depend on
// which block arrives last.
//
// M tile 32 takes the ldmatrix + mma.sync path of M tile 16 with four 8-row X blocks, and WK up to 4. Session 8's
// A/B (docs/benchmarks.md, run 69; graph replay, M = 24 / 32, 12 decode layers) against the wgmma path below, which
// served M tile 32 until then with WK <= 2: WK = 4 (32-row tiles, 128 of them at N = 4096) took 4096x4096 from 14.6
// to 12.0 us and 3584x3584 from 13.1 to 10.2 (cuBLASLt 13.1 / 11.2); with 64 or 128-row tiles those layers left
// half the SMs idle.
//
// M tile 64, and the "wsg" kernels at M tiles 8 and 16 (kWide; WK <= 2, skinny_config.h ws_wide): the consumers are
// two warpgroups, and each stage is multiplied with wgmma m64nMTk16 (core/wgmma.cuh) straight from shared memory:
// WK = 1, warpgroup g takes rows 64g.. of the 128-row unit; WK = 2, warpgroup g takes the units q = g (mod 2) of the
// stage, UPW of them (units per warpgroup per stage, a template parameter: 1, or 2 for "wsg2"). Units sit TR rows apart
// (TR a multiple of 8, so each starts on a 1024-byte swizzle period); an m64 read past TR rows takes the next unit's
// rows or the ring's slack and feeds only accumulator rows that are never stored. X of unit q sits in its own MT-row
// slot (the descriptor needs 1024-byte aligned 8-row groups): a whole stage's X comes in one 3D copy of MT-row boxes,
// rows M..MT-1 zero-filled, so a stage is two copies (with a 2D X copy per unit, three, 1 x 4096 x 4096 took 14.54
// us against 11.48, runs 398-399). A stage at the end of K is fetched unit by unit with every unit issued, the ones
// past K zero-filled: a branch around wgmma would serialize every wgmma of the kernel (ptxas C7520). Each warpgroup
// keeps one wgmma group in flight and frees a slot one stage late.
//
// The wsg kernels against the mma.sync ones (runs 397-400, graph replay, decode rows): level or behind at M <= 16,
// 2-7% ahead on a few rows whose pick was cuBLASLt (8 x 8192 x 3584, 2-8 x 4608 x 3584), ~10% behind at 4096 x 4096,
// where the mma.sync kernel's 16-row tiles give each stage 1 KB of every W row; no faster in plain launches.
#pragma once

#include "backends/skinny/skinny_tma_kernel.cuh"
#include "core/wgmma.cuh"

namespace tgemm::skinny {

namespace dev {
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, int c0, int c1, int c2, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
      ::"r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}

// tma_load_3d with an optional L2 policy (ptx::L2Policy).
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, int c0, int c1, int c2, uint32_t bar,
                                            ptx::L2Policy h) {
  if (!h.on) return tma_load_3d(dst, map, c0, c1, c2, bar);
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "l"(h.policy)
      : "memory");
}

// Barrier over the 8 consumer warps only (the producer warp never arrives at it).
__device__ __forceinline__ void consumer_sync() { asm volatile("bar.sync 1, %0;" ::"n"(kThreads) : "memory"); }
}  // namespace dev

// Grid: min(work items, SMs) blocks of kTmaThreads threads, one per SM (dynamic shared memory
// stages * ws_stage_bytes(WK, M) + kSmemAlign, or on the wgmma path stages * ws_wide_stage_bytes(WK * UPW, TR, MT) +
// kWsWideSlack + kSmemAlign; and the static partial tile).
template <class T, int MT, bool Wide = ws_wide(MT), int UPW = 1>
__global__ void __launch_bounds__(kTmaThreads, 1) skinny_ws_kernel(const __grid_constant__ TmaParams tp) {
  static_assert(MT == 8 || MT == 16 || MT == 32 || MT == 64, "M tile");
  static_assert(Wide || MT > 8, "M tile 8 has only the wgmma path (M <= 8 runs M tile 16's mma.sync one)");
  static_assert(UPW == 1 || (Wide && UPW <= kWsWideMaxUpw), "units per warpgroup per stage: the wgmma path");
  constexpr int NB = MT / 8;
  constexpr bool kWide = Wide;  // wgmma consumers (see the top of this file)
  const Params& p = tp.p;
  extern __shared__ unsigned char smem_dyn[];
  __shared__ uint64_t bars[2 * kWsMaxStages];  // full[0..stages), empty[kWsMaxStages..)
  __shared__ float part[ws_part_floats(MT)];
  __shared__ int last_arrival;

  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wkl = p.wk_log2;
  const int WK = 1 << wkl;
  // Warp -> (K unit wk, 16-row block wn). kWide: by warpgroup (warps 4g..4g+3 share g's unit or rows).
  const int wk = kWide ? (warp >> 2) & (WK - 1) : warp & (WK - 1);
  const int wn = kWide ? (WK == 1 ? warp : warp & 3) : (warp >> wkl) & ((kWarps >> wkl) - 1);
  const int brl = 7 - wkl;
  const int BR = 1 << brl;
  const int BRP = BR + kPartPad;
  const int m = p.m;
  const int ST = tp.stages;
  // Rows per tile (skinny_config.h, ws_tile_rows): TR <= BR; the slot keeps BR rows, of which the W box fills TR.
  const int TR = tp.tile_rows > 0 ? tp.tile_rows : BR;
  const int64_t tiles = (p.n + TR - 1) / TR;
  const int64_t ku = p.k_steps;                 // 64-element units of K
  const int S = p.s;                            // blocks along K per tile
  const int64_t ups = S > 1 ? p.sps : ku;       // units per split, a multiple of WK when S > 1
  const int64_t items = tiles * S;
  const uint32_t wload = uint32_t(TR) * 128;    // what its W box brings
  // A unit's W slot: BR rows for the ldmatrix consumers; TR rows (a multiple of 8) for the wgmma ones, whose units sit
  // TR rows apart however they are fetched (their reads past TR rows stay inside the ring's kWsWideSlack).
  const uint32_t wbytes = kWide ? wload : uint32_t(BR) * 128;
  // Units per stage: WK, or with the wgmma consumers WK x UPW (each warpgroup takes UPW units of each stage), so
  // that one 3D copy brings more contiguous bytes of each W row (skinny_config.h, kWsWideSlack).
  const int SU = WK * UPW;
  const uint32_t xbytes = uint32_t(m) * 128;    // what the X box brings
  const uint32_t xslot = kWide ? uint32_t(MT) * 128 : uint32_t((m + 7) / 8) * 1024;
  const uint32_t stage_bytes = uint32_t(SU) * (wbytes + xslot);
  const uint32_t ring = smem_align_up(ptx::smem_addr(smem_dyn));
  const uint32_t full0 = ptx::smem_addr(&bars[0]), empty0 = ptx::smem_addr(&bars[kWsMaxStages]);
  const bool producer = warp == kWarps;

  // Whether the stage from unit u0 came as one 3D copy (packed) or unit by unit: the producer's choice, which the
  // consumers' addressing must follow; and where unit wk's W rows start in a stage at st.
  auto packed = [&](int64_t u0) { return tp.use3 && u0 + SU <= tp.kfull; };
  auto w_unit = [&](uint32_t st, bool pk) { return st + uint32_t(wk) * (pk ? wload : wbytes); };
  // A stage: W, then X, of the WK units from u0 of the item ending at ue; one 3D copy each where the stage is whole
  // units, else unit by unit with the 2D maps (zero fill past K). A 3D box packs the units TR rows apart (the ldmatrix
  // consumers shift their swizzle phase by wk * TR; the wgmma ones get TR a multiple of 8); unit by unit they sit BR
  // rows apart in their slots.
  const ptx::L2Policy whint = ptx::l2_policy_evict_first(tp.w_evict_first != 0);  // W is read once (skinny.cpp)
  auto load_stage = [&](int slot, int row0, int64_t u0, int64_t ue) {
    const uint32_t full = full0 + 8 * slot;
    const uint32_t st = ring + uint32_t(slot) * stage_bytes;
    if (packed(u0)) {
      // kWide: tp.x3's boxes are MT rows (skinny.cpp), so unit q lands in its MT-row slot, rows M.. zero-filled.
      ptx::mbar_arrive_expect_tx(full, uint32_t(SU) * (wload + (kWide ? xslot : xbytes)));
      dev::tma_load_3d(st, &tp.w3, 0, row0, int(u0), full, whint);
      dev::tma_load_3d(st + SU * wbytes, &tp.x3, 0, 0, int(u0), full);
    } else {
      // The wgmma consumers multiply every unit of a stage (a branch around wgmma serializes them all, ptxas C7520):
      // the units past K come zero-filled. Only the last stage of K has any (splits are whole stages).
      const int units = kWide ? SU : int(min(int64_t(WK), ue - u0));
      ptx::mbar_arrive_expect_tx(full, uint32_t(units) * (wload + xbytes));
      for (int q = 0; q < units; ++q) {
        const int kc = int((u0 + q) * kTmaUnitK);
        ptx::tma_load_2d(st + q * wbytes, &tp.w, full, kc, row0, whint);
        ptx::tma_load_2d(st + SU * wbytes + q * xslot, &tp.x, full, kc, 0);
      }
    }
  };
  // This block's first item, and the stages of it the first ring holds (none with TGEMM_SKINNY_WS_EARLY_RING=0).
  const int64_t t0 = blockIdx.x / S, ub0 = (blockIdx.x - t0 * S) * ups, ue0 = min(ub0 + ups, ku);
  const int64_t first = blockIdx.x < items && tp.early_ring ? min(int64_t(ST), (ue0 - ub0 + SU - 1) / SU) : 0;
  if (producer && lane == 0) {
    dev::init_ring(full0, empty0, ST, tp);
    // Before the PDL wait only L2 prefetches of W (see skinny_tma_kernel.cuh): the first tp.prefetch_units units of
    // this block's first item (skinny_config.h, kWsPrefetchBytes: one stage, not the whole ring).
    const int64_t pre = min(int64_t(tp.prefetch_units), min(ups, ku - ub0));
    for (int64_t u = 0; u < pre; ++u) dev::tma_prefetch_2d(&tp.w, int((ub0 + u) * kTmaUnitK), int(t0 * TR));
  }
  // The barrier before the wait and the first ring issued in straight-line code right after it: the producer's loop
  // issued its first copy ~0.5 us after the release, though the block had entered early (run 225's trace; probably
  // the first fetch of the loop's code). Graph replay, 48 decode and M = 32 shapes, same process (docs/benchmarks.md,
  // runs 226-229): the release-to-first-stage time 1.31 -> 0.90-1.06 us, the three ws kernels +1.0-1.4% (geometric
  // means x cuBLASLt), the table's picks +0.7%; stage 0 alone (the rest from the loop) gained 0.1-0.5%. The same
  // change in the sm90 skeleton (no PDL there) lost 0.5-1% (run 230).
  __syncthreads();  // barriers initialized
  pdl::launch_dependents();
  pdl::wait();

  if (producer) {
    if (lane == 0) {
      for (int64_t i = 0; i < first; ++i) load_stage(int(i), int(t0 * TR), ub0 + i * SU, ue0);
      int slot = 0;
      uint32_t phase = 0;
      int64_t it = 0;
      for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
        const int64_t tile = item / S;
        const int row0 = int(tile * TR);
        const int64_t ub = (item - tile * S) * ups, ue = min(ub + ups, ku);
        for (int64_t u0 = ub; u0 < ue; u0 += SU, ++it) {
          if (it >= first) {
            if (it >= ST) ptx::mbar_wait(empty0 + 8 * slot, phase ^ 1u);
            load_stage(slot, row0, u0, ue);
          }
          if (++slot == ST) {
            slot = 0;
            phase ^= 1u;
          }
        }
      }
    }
    __syncwarp();
    return;  // the consumers' named barriers do not count this warp
  }

  const uint32_t sw = lane & 7;
  const uint32_t a_row = uint32_t(wn * kWarpRows + (lane & 15)) * 128;
  const uint32_t a_hi = uint32_t(lane >> 4);
  const uint32_t b_row = uint32_t(lane & 7) * 128;
  const uint32_t b_hi = uint32_t(lane >> 3);
  const uint32_t rx = uint32_t(wk * m + (lane & 7));  // packed X row of this lane in a 3D-fetched stage
  int slot = 0;
  uint32_t phase = 0;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t tile = item / S;
    const int64_t ub = (item - tile * S) * ups, ue = min(ub + ups, ku);
    float acc[NB][4];
#pragma unroll
    for (int nb = 0; nb < NB; ++nb) acc[nb][0] = acc[nb][1] = acc[nb][2] = acc[nb][3] = 0.f;
    // Every output this thread stores below is in column n0 + (tid & (BR - 1)) (kThreads is a multiple of BR), so its
    // one bias value is loaded here and its latency hides behind the main loop; loaded in the epilogue it stalled
    // every tile on a DRAM round trip (run 78: 0.3-0.8 us per launch with bias, e.g. 1x6144x4096 16.7 -> 16.0).
    const int64_t n_bias = tile * TR + (tid & (BR - 1));
    const float bias =
        p.bias_kind && (tid & (BR - 1)) < TR && n_bias < p.n ? dev::load_bias<T>(p.bias, p.bias_kind, n_bias) : 0.f;
    int prev_slot = -1;  // kWide: the slot whose wgmma group may still be reading it
    for (int64_t u0 = ub; u0 < ue; u0 += SU) {
      if constexpr (kWide) {
        ptx::mbar_wait(full0 + 8 * slot, phase);
        {
          const uint32_t st = ring + uint32_t(slot) * stage_bytes;
          // acc[NB][4] is the wgmma accumulator d[MT / 2] in the same order (core/wgmma.cuh).
          float(&d)[MT / 2] = reinterpret_cast<float(&)[MT / 2]>(acc);
          wgmma::fence();
#pragma unroll
          for (int j = 0; j < UPW; ++j) {  // this warpgroup's units of the stage
            const int q = j * WK + wk;
            const uint64_t da = wgmma::desc_sw128(st + uint32_t(q) * wbytes + uint32_t(wn >> 2) * 64 * 128);
            const uint64_t db = wgmma::desc_sw128(st + uint32_t(SU) * wbytes + uint32_t(q) * xslot);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk)  // k16 step kk: 32 bytes further along each 128-byte swizzled row
              Wgmma<MT, std::is_same_v<T, __nv_bfloat16>>::mma(d, da + 2 * kk, db + 2 * kk, 1u);
          }
        }
        // One group in flight: this stage's may still run while the previous stage's, now complete, frees its
        // slot. Waiting for each stage's own group held a warpgroup to one unit per wgmma round trip: 32-row tiles
        // (4 KB units) streamed at ~60% of the mma.sync kernel's rate (run 397, 3584 x 18944).
        wgmma::commit();
        wgmma::wait<1>();
        __syncwarp();
        if (lane == 0 && prev_slot >= 0) ptx::mbar_arrive(empty0 + 8 * prev_slot);
        prev_slot = slot;
        if (++slot == ST) {
          slot = 0;
          phase ^= 1u;
        }
        continue;
      }
      const bool live = u0 + wk < ue;  // warp-uniform
      const bool pk = packed(u0);
      ptx::mbar_wait(full0 + 8 * slot, phase);
      const uint32_t st = ring + uint32_t(slot) * stage_bytes;
      const uint32_t ws = w_unit(st, pk);
      const uint32_t xr = st + uint32_t(WK) * wbytes;
      // Row (lane & 7) of M-block nb: its base and the swizzle term (row & 7) in either layout.
      const uint32_t xs = pk ? xr + rx * 128 : xr + uint32_t(wk) * xslot + b_row;
      const uint32_t xsw = pk ? (rx & 7) : sw;
      uint32_t a[4][4];
      uint32_t b[NB][2][4];
      // A packed unit starts TR rows after the previous one, so its rows' swizzle phase is shifted by wk * TR.
      const uint32_t wsw = pk ? (uint32_t(wk * TR) + lane) & 7 : sw;
      if (live) dev::ldsm_step<NB>(a, b, ws + a_row, a_hi, wsw, xs, b_hi, xsw, m);
      dev::mma_then_release<T, NB>(acc, a, b, m, live, empty0 + 8 * slot, lane);
      if (++slot == ST) {
        slot = 0;
        phase ^= 1u;
      }
    }

    if constexpr (kWide) {
      wgmma::wait<0>();  // acc is final and the item's last slot read
      __syncwarp();
      if (lane == 0 && prev_slot >= 0) ptx::mbar_arrive(empty0 + 8 * prev_slot);
    }
    // This tile's partials -> part[wk][mm][row] (rows padded to BRP floats), then the fixed-order sum.
    const int64_t n0 = tile * TR;
    dev::write_partials<NB>(part, acc, BRP, wk, wn * kWarpRows + g, t, m);
    dev::consumer_sync();
    const int total = m * BR;
    if (S == 1) {
      for (int idx = tid; idx < total; idx += kThreads) {
        const int mm = idx >> brl, r = idx & (BR - 1);
        const int64_t n = n0 + r;
        if (r >= TR || n >= p.n) continue;
        float v = dev::sum_partials(part, BRP, MT, WK, mm, r);
        if (p.bias_kind) v += bias;
        dev::store_y<true>(p.y, p.out_dtype, int64_t(mm) * p.ldy + n, v);
      }
    } else {
      // This item's slot [m][BR] among the tile's S slots; stores and loads through L2 (.cg): other SMs read them.
      float* const slots = p.partials + tile * S * int64_t(total);
      float* const mine = slots + (item - tile * S) * int64_t(total);
      for (int idx = tid; idx < total; idx += kThreads)
        __stcg(mine + idx, dev::sum_partials(part, BRP, MT, WK, idx >> brl, idx & (BR - 1)));
      __threadfence();  // this thread's slot stores are visible device-wide before the count below
      dev::consumer_sync();
      if (tid == 0) {
        last_arrival = atomicAdd(p.counters + tile, 1) == S - 1;
        // Every block of the tile has counted: nothing else touches this counter in this launch, and the next
        // launch finds it zero (the stream's zeroed counters need no memset; skinny.cpp).
        if (last_arrival) p.counters[tile] = 0;
      }
      dev::consumer_sync();
      if (last_arrival) {
        __threadfence();  // the other blocks' slots, counted before this block's arrival, are read after it
        // kSumBatch outputs per thread at a time, the loads of all S slots (S <= kWsMaxSplits, skinny.cpp checks)
        // issued before any add: one L2 round trip per batch, where one per slot (a batch of 8 outputs, then each
        // further slot) left the sum S round trips behind the last block's own main loop. Graph replay, 1280 x 8192
        // (five splits) on the m32 auto kernel at M = 1 and 4: 9.9-10.5 -> 9.2-9.6 us, cuBLASLt 9.7-9.9 (runs 176-177
        // against 178-179, docs/benchmarks.md session 20). Batches of 4 gave the M tile 32 kernel a stack frame
        // (CI's sass_sm90). At M tile 64 (16 outputs per thread) this is 8 round trips where S = 2 took 4 before;
        // no table picks that kernel. The sum stays in split order.
        constexpr int kSumBatch = 2;
        for (int i0 = tid; i0 < total; i0 += kThreads * kSumBatch) {
          float v[kSumBatch][kWsMaxSplits];
#pragma unroll
          for (int b = 0; b < kSumBatch; ++b) {
            const int idx = i0 + b * kThreads;
#pragma unroll
            for (int q = 0; q < kWsMaxSplits; ++q)
              v[b][q] = q < S && idx < total ? __ldcg(slots + int64_t(q) * total + idx) : 0.f;
          }
#pragma unroll
          for (int b = 0; b < kSumBatch; ++b) {
            const int idx = i0 + b * kThreads;
            const int mm = idx >> brl, r = idx & (BR - 1);
            const int64_t n = n0 + r;
            if (idx >= total || n >= p.n) continue;
            float y = v[b][0];
#pragma unroll
            for (int q = 1; q < kWsMaxSplits; ++q)
              if (q < S) y += v[b][q];
            if (p.bias_kind) y += bias;
            dev::store_y<true>(p.y, p.out_dtype, int64_t(mm) * p.ldy + n, y);
          }
        }
      }
    }
    dev::consumer_sync();  // part (and last_arrival) are rewritten by the next item
  }
}

}  // namespace tgemm::skinny
