// skinny backend: the TMA variant of the device kernel. Included by the per-dtype instantiation files only.
//
// Same product and same fixed-order reduction as skinny_gemm_kernel (dev::reduce_store), but W and X reach the
// mma fragments through shared memory: one producer thread (warp 8) streams 2D boxes with the bulk tensor copy
// engine into a ring of `stages` stages completed on mbarriers, so each block keeps ~64 KB in flight without
// spending registers on it (the register ring holds at most 2 x depth x 16 B per thread). Consumer warps read
// their A (W) and B (X) fragments with ldmatrix.
//
// Stage layout: WK W boxes (BR rows x 128 B), then WK X boxes (x_rows x 128 B), each 1024-byte aligned. With the
// 128-byte swizzle the 16-byte chunk c of box row r lies at r * 128 + ((c ^ (r & 7)) << 4): the 8 rows one
// ldmatrix phase reads sit in 8 different chunks, all 32 banks, no conflicts.
//
// K: unit u covers K elements [64u, 64u + 64). Block rank q of the cluster owns units [q * sps, (q + 1) * sps)
// (sps a multiple of WK); stage j of the block holds units q * sps + j * WK + wk for wk < WK, consumed by the
// warps with that wk. Units past the block's range (only at the end of K) are neither copied nor consumed;
// elements past K inside the last unit, W rows past N and X rows past M are zero-filled by the copy engine.
#pragma once

#include "backends/skinny/skinny_kernel.cuh"
#include "backends/skinny/skinny_tma.h"
#include "core/ptx.cuh"

namespace tgemm::skinny {

namespace dev {

// L2-only prefetch of a box; like prefetch.global.L2 it cannot hand this grid stale data (see prefetch_l2).
__device__ __forceinline__ void tma_prefetch_2d(const CUtensorMap* map, int c0, int c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(map), "r"(c0), "r"(c1)
               : "memory");
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// One k-step's ldmatrix fragments from a ring stage of 128-byte swizzled rows: a[kk] = k16 step kk of the warp's 16 W
// rows at `w` (the lane's row already added), b[nb][h] = k32 half h of X rows 8 nb.. 8 nb + 7 at `x` + nb * 1024.
// `wsw` / `xsw`: the swizzle term (row & 7) of the lane's W / X row. Blocks of X rows at or past m are skipped.
template <int NB>
__device__ __forceinline__ void ldsm_step(uint32_t (&a)[4][4], uint32_t (&b)[NB][2][4], uint32_t w, uint32_t a_hi,
                                          uint32_t wsw, uint32_t x, uint32_t b_hi, uint32_t xsw, int m) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) ldsm_x4(a[kk], w + (((2 * kk + a_hi) ^ wsw) << 4));
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
    if (nb > 0 && nb * 8 >= m) break;
#pragma unroll
    for (int h = 0; h < 2; ++h) ldsm_x4(b[nb][h], x + nb * 1024 + (((4 * h + b_hi) ^ xsw) << 4));
  }
}

// The ring's barriers (full: the producer's one arrival plus the bytes; empty: one arrival per consumer warp) and the
// descriptors of both tensor maps fetched ahead of the first copy. Called by one thread of the block.
__device__ __forceinline__ void init_ring(uint32_t full0, uint32_t empty0, int stages, const TmaParams& tp) {
  for (int i = 0; i < stages; ++i) {
    ptx::mbar_init(full0 + 8 * i, 1);
    ptx::mbar_init(empty0 + 8 * i, kWarps);
  }
  ptx::fence_mbar_init();
  ptx::prefetch_tmap(&tp.w);
  ptx::prefetch_tmap(&tp.x);
}

// One 64-wide k-step from ldmatrix fragments: a[kk] is the warp's 16 W rows x 16 k of k16 step kk, b[nb][h] the
// X fragments of rows 8 nb.. 8 nb + 7 (two k32 halves); blocks of X rows at or past m are skipped.
template <class T, int NB>
__device__ __forceinline__ void mma_fragments(float (&acc)[NB][4], const uint32_t (&a)[4][4], const uint32_t (&b)[NB][2][4],
                                              int m) {
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
    if (nb > 0 && nb * 8 >= m) break;
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      mma16816<T>(acc[nb], a[kk][0], a[kk][1], a[kk][2], a[kk][3], b[nb][kk >> 1][2 * (kk & 1)], b[nb][kk >> 1][2 * (kk & 1) + 1]);
  }
}

// One k-step's products, then the slot's release. ldmatrix fills its registers asynchronously and
// mbarrier.arrive does not wait for it (the SASS arrive carries no scoreboard wait on the LDSMs), so an arrive
// issued right after the loads let the producer's TMA refill land before a delayed read: run 26 measured about
// 1 wrong output in 8000 calls of the ws kernel alone on 8 host threads, and 1 in 10 beside other kernels
// (ConcurrencyGpu.EightThreadsEightStreamsEveryBackend). The mma reads every fragment, so it waits for every
// ldmatrix; arriving after it orders the release behind the reads.
template <class T, int NB>
__device__ __forceinline__ void mma_then_release(float (&acc)[NB][4], const uint32_t (&a)[4][4],
                                                 const uint32_t (&b)[NB][2][4], int m, bool live, uint32_t empty,
                                                 int lane) {
  if (live) mma_fragments<T, NB>(acc, a, b, m);
  __syncwarp();
  if (lane == 0) ptx::mbar_arrive(empty);
}

}  // namespace dev

// Grid: blocks_x = row_tiles * S (cluster (S, 1, 1) when S > 1), kTmaThreads threads, dynamic shared memory
// stages * tma_stage_bytes(WK, x_rows) + kSmemAlign.
template <class T, int MT>
__global__ void __launch_bounds__(kTmaThreads, kTmaBlocksPerSm) skinny_tma_kernel(const __grid_constant__ TmaParams tp) {
  static_assert(MT % 8 == 0 && MT >= 8 && MT <= 16, "M tile");
  constexpr int NB = MT / 8;
  const Params& p = tp.p;
  extern __shared__ unsigned char smem_dyn[];
  __shared__ uint64_t bars[2 * kTmaMaxStages];  // full[0..stages), empty[kTmaMaxStages..)

  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wkl = p.wk_log2;
  const int WK = 1 << wkl;
  const int wk = warp & (WK - 1);
  const int wn = (warp >> wkl) & ((kWarps >> wkl) - 1);
  const int BR = kBlockRowsMax >> wkl;
  const int S = p.s;
  const int64_t rt = blockIdx.x / S;
  const int srank = static_cast<int>(blockIdx.x - rt * S);
  const int64_t n0 = rt * BR;
  const int m = p.m;
  const int ST = tp.stages;
  const uint32_t wbytes = uint32_t(BR) * 128, xbytes = uint32_t(tp.x_rows) * 128;
  const uint32_t stage_bytes = uint32_t(WK) * (wbytes + xbytes);
  const uint32_t ring = smem_align_up(ptx::smem_addr(smem_dyn));
  const uint32_t full0 = ptx::smem_addr(&bars[0]), empty0 = ptx::smem_addr(&bars[kTmaMaxStages]);

  const int64_t ub = int64_t(srank) * p.sps;  // first K unit of the block
  const int64_t ue = min(ub + p.sps, p.k_steps);
  const int nst = ub < ue ? int((ue - ub + WK - 1) >> wkl) : 0;  // stages of this block
  const bool producer = warp == kWarps;

  if (producer && lane == 0) {
    dev::init_ring(full0, empty0, ST, tp);
    // Before the PDL wait only L2 prefetches of W: a bulk copy into shared memory issued here would be a read
    // of global memory that the memory model does not order after the previous grid's writes. W is never
    // written by it in a decode step, but nothing here can know that.
    for (int j = 0; j < ST && j < nst; ++j)
      for (int q = 0; q < WK; ++q) {
        const int64_t u = ub + int64_t(j) * WK + q;
        if (u < ue) dev::tma_prefetch_2d(&tp.w, int(u * kTmaUnitK), int(n0));
      }
  }
  pdl::launch_dependents();
  pdl::wait();
  __syncthreads();  // barriers initialized

  float acc[NB][4];
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) acc[nb][0] = acc[nb][1] = acc[nb][2] = acc[nb][3] = 0.f;

  if (producer) {
    if (lane == 0) {
      int slot = 0;
      uint32_t phase = 0;
      for (int j = 0; j < nst; ++j) {
        if (j >= ST) ptx::mbar_wait(empty0 + 8 * slot, phase ^ 1u);
        const uint32_t full = full0 + 8 * slot;
        const int64_t u0 = ub + int64_t(j) * WK;
        const int units = int(min(int64_t(WK), ue - u0));
        ptx::mbar_arrive_expect_tx(full, uint32_t(units) * (wbytes + xbytes));
        const uint32_t st = ring + uint32_t(slot) * stage_bytes;
        for (int q = 0; q < units; ++q) {
          const int kc = int((u0 + q) * kTmaUnitK);
          ptx::tma_load_2d(st + q * wbytes, &tp.w, full, kc, int(n0));
          ptx::tma_load_2d(st + WK * wbytes + q * xbytes, &tp.x, full, kc, 0);
        }
        if (++slot == ST) {
          slot = 0;
          phase ^= 1u;
        }
      }
    }
    __syncwarp();
  } else {
    // ldmatrix addresses: A (W) rows wn * 16 + (lane & 15), chunk 2kk + (lane >> 4); B (X) rows nb * 8 + (lane & 7),
    // chunk 4h + (lane >> 3). Row & 7 == lane & 7 in both, so the swizzle term is chunk ^ (lane & 7).
    const uint32_t sw = lane & 7;
    const uint32_t a_row = uint32_t(wn * kWarpRows + (lane & 15)) * 128;
    const uint32_t a_hi = uint32_t(lane >> 4);
    const uint32_t b_row = uint32_t(lane & 7) * 128;
    const uint32_t b_hi = uint32_t(lane >> 3);
    int slot = 0;
    uint32_t phase = 0;
    for (int j = 0; j < nst; ++j) {
      const bool live = ub + int64_t(j) * WK + wk < ue;  // warp-uniform
      ptx::mbar_wait(full0 + 8 * slot, phase);
      const uint32_t ws = ring + uint32_t(slot) * stage_bytes + uint32_t(wk) * wbytes;
      const uint32_t xs = ring + uint32_t(slot) * stage_bytes + uint32_t(WK) * wbytes + uint32_t(wk) * xbytes;
      uint32_t a[4][4];
      uint32_t b[NB][2][4];
      if (live) dev::ldsm_step<NB>(a, b, ws + a_row, a_hi, sw, xs + b_row, b_hi, sw, m);
      dev::mma_then_release<T, NB>(acc, a, b, m, live, empty0 + 8 * slot, lane);
      if (++slot == ST) {
        slot = 0;
        phase ^= 1u;
      }
    }
  }

  // Every copy has landed (each consumer waited on every stage) and every ldmatrix has returned once all warps
  // pass this barrier, so the partial tiles can reuse the ring.
  __syncthreads();
  dev::reduce_store<T, MT, true>(reinterpret_cast<float*>(smem_dyn + (ring - ptx::smem_addr(smem_dyn))), acc, p, tid,
                                 !producer, wk, wn, g, t, n0, srank);
}

}  // namespace tgemm::skinny
