// skinny backend: the device kernel. Included by the per-dtype instantiation files only.
//
// Y^T[N, M] = W[N, K] · X[M, K]^T on mma.sync.m16n8k16 (fp32 accumulate): W rows are the 16-row A operand, X
// rows the 8-column B operand, so W streams straight from global memory into A fragments with 16-byte loads.
//
// K permutation. A warp step covers 32 consecutive K elements; lane (g = lane / 4, t = lane % 4) loads the
// 16-byte chunk k0 + 8t .. k0 + 8t + 7 of W rows g and g + 8 and of X row g (+ 8 * nb). The two mmas of the step
// take chunk elements 0..3 and 4..7: in mma h the fragment's logical k-slots {2t, 2t+1} hold real elements
// 8t + 4h + {0, 1} and slots {2t+8, 2t+9} hold 8t + 4h + {2, 3}. A and B use the same map, a bijection of the
// step's 32 K positions onto 2 x 16 slots, so the dot products are unchanged.
//
// Reduction (fixed order, no atomics): each warp's 16 x MT partial tile goes to shared memory; the block sums
// its WK warps' tiles in warp order; with S > 1 the S blocks of a cluster then sum their block tiles in rank
// order through distributed shared memory. Bias is added last, then the conversion to Y's dtype.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "backends/skinny/skinny_config.h"
#include "core/pdl.cuh"

namespace tgemm::skinny {

namespace dev {

template <class T>
__device__ __forceinline__ void mma16816(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
}

// W: read once, keep it out of L1 (X lives there).
__device__ __forceinline__ uint4 ld_stream16(const void* p) {
  uint4 r;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
  return r;
}

// X: re-read by every warp of the SM, cached in L1.
__device__ __forceinline__ uint4 ld_cached16(const void* p) {
  uint4 r;
  asm("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}

__device__ __forceinline__ uint32_t ld_u16(const void* p) {
  unsigned short v;
  asm("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
  return v;
}

// Elements [0, valid) of the 8-element chunk at p, zeros after; any 2-byte alignment.
__device__ __forceinline__ uint4 ld_elems(const void* p, int64_t valid) {
  const unsigned short* q = static_cast<const unsigned short*>(p);
  uint32_t e[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) e[i] = i < valid ? ld_u16(q + i) : 0u;
  return make_uint4(e[0] | (e[1] << 16), e[2] | (e[3] << 16), e[4] | (e[5] << 16), e[6] | (e[7] << 16));
}

// The chunk starting at element kc of a row whose pointer is p (already offset to kc).
// GUARD: kc may be past K or the chunk may straddle it (those elements read as zero).
template <bool VEC, bool STREAM, bool GUARD>
__device__ __forceinline__ uint4 ld_chunk(const void* p, int64_t kc, int64_t k) {
  if constexpr (GUARD) {
    const int64_t valid = k - kc;
    if (VEC && valid >= 8) return STREAM ? ld_stream16(p) : ld_cached16(p);
    return ld_elems(p, valid);  // valid <= 0 gives zeros without touching memory
  } else {
    if constexpr (VEC) return STREAM ? ld_stream16(p) : ld_cached16(p);
    return ld_elems(p, 8);
  }
}

// Prefetch into L2 only. Safe before griddepcontrol.wait: L2 is the point of coherence, so a line warmed
// here can never hand out data older than what the previous grid writes to it.
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// One K step (32 elements) of the warp: two mmas per 8-row block of X.
template <class T, int NB>
__device__ __forceinline__ void mma_step(float (&acc)[NB][4], const uint4& lo, const uint4& hi, const uint4& b, int nb) {
  mma16816<T>(acc[nb], lo.x, hi.x, lo.y, hi.y, b.x, b.y);
  mma16816<T>(acc[nb], lo.z, hi.z, lo.w, hi.w, b.z, b.w);
}

// Ring slot load: step at element offset off (entirely inside K).
template <class T, int NB, bool VEC, bool XR>
__device__ __forceinline__ void ring_load(uint4 (&w)[2], uint4 (&x)[NB], const T* wlo, const T* whi,
                                          const T* const (&xrow)[NB], int64_t off, int m) {
  w[0] = ld_chunk<VEC, true, false>(wlo + off, 0, 0);
  w[1] = ld_chunk<VEC, true, false>(whi + off, 0, 0);
  if constexpr (XR) {
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
      if (nb == 0 || nb * 8 < m) x[nb] = ld_chunk<VEC, false, false>(xrow[nb] + off, 0, 0);
  }
}

template <class T, int NB, bool VEC, bool XR>
__device__ __forceinline__ void ring_step(float (&acc)[NB][4], const uint4 (&w)[2], const uint4 (&x)[NB],
                                          const T* const (&xrow)[NB], int64_t off, int m) {
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
    if (nb > 0 && nb * 8 >= m) break;  // warp-uniform: M-blocks past M do nothing
    if constexpr (XR) mma_step<T, NB>(acc, w[0], w[1], x[nb], nb);
    else mma_step<T, NB>(acc, w[0], w[1], ld_chunk<VEC, false, false>(xrow[nb] + off, 0, 0), nb);
  }
}

// The K step that crosses K (or lies past it): element-guarded loads, zeros past K.
template <class T, int NB, bool VEC>
__device__ __forceinline__ void guarded_step(float (&acc)[NB][4], const T* wlo, const T* whi, const T* xl, int64_t ldx,
                                             int g, int64_t off, int64_t klane, int64_t k, int m) {
  const uint4 lo = ld_chunk<VEC, true, true>(wlo + off, off + klane, k);
  const uint4 hi = ld_chunk<VEC, true, true>(whi + off, off + klane, k);
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
    if (nb > 0 && nb * 8 >= m) break;
    const int xr = min(nb * 8 + g, m - 1);
    mma_step<T, NB>(acc, lo, hi, ld_chunk<VEC, false, true>(xl + xr * ldx + off, off + klane, k), nb);
  }
}

template <class T>
__device__ __forceinline__ float load_bias(const void* bias, int kind, int64_t n) {
  if (kind == 1) {
    const T v = static_cast<const T*>(bias)[n];
    if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(v);
    else return __half2float(v);
  }
  const unsigned char* p = static_cast<const unsigned char*>(bias) + 4 * n;
  if ((reinterpret_cast<uintptr_t>(p) & 3) == 0) return *reinterpret_cast<const float*>(p);
  const unsigned short* h = reinterpret_cast<const unsigned short*>(p);  // 2-byte aligned (declared)
  return __uint_as_float(uint32_t(h[0]) | (uint32_t(h[1]) << 16));
}

// ALIGNED: Y's base and ldy keep every fp32 element 4-byte aligned (the 16-byte variant's limits).
template <bool ALIGNED>
__device__ __forceinline__ void store_y(void* y, int out, int64_t off, float v) {
  if (out == 0) {
    static_cast<__nv_bfloat16*>(y)[off] = __float2bfloat16_rn(v);
  } else if (out == 1) {
    static_cast<__half*>(y)[off] = __float2half_rn(v);
  } else {
    float* p = static_cast<float*>(y) + off;
    if (ALIGNED || (reinterpret_cast<uintptr_t>(p) & 3) == 0) {
      *p = v;
    } else {
      const uint32_t u = __float_as_uint(v);
      unsigned short* h = reinterpret_cast<unsigned short*>(p);
      h[0] = static_cast<unsigned short>(u & 0xffffu);
      h[1] = static_cast<unsigned short>(u >> 16);
    }
  }
}

// A warp's 16 x (8 NB) partial tile -> part[wk][m][row], rows padded to `brp` floats (mma.sync's C layout: thread
// (g, t) holds rows g and g + 8 of columns 2t and 2t + 1 of each 8-column block).
template <int NB>
__device__ __forceinline__ void write_partials(float* part, const float (&acc)[NB][4], int brp, int wk, int r0, int t, int m) {
  float* mine = part + (wk * NB * 8) * brp;
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
    if (nb > 0 && nb * 8 >= m) break;
    const int mm = nb * 8 + 2 * t;
    mine[mm * brp + r0] = acc[nb][0];
    mine[(mm + 1) * brp + r0] = acc[nb][1];
    mine[mm * brp + r0 + 8] = acc[nb][2];
    mine[(mm + 1) * brp + r0 + 8] = acc[nb][3];
  }
}

// Output (mm, r) summed over the `wks` warp tiles in warp order: the same bits whichever thread sums.
__device__ __forceinline__ float sum_partials(const float* part, int brp, int mt, int wks, int mm, int r) {
  float v = part[mm * brp + r];
  for (int q = 1; q < wks; ++q) v += part[(q * mt + mm) * brp + r];
  return v;
}

// The block's fixed-order reduction and the epilogue, shared by both kernels: each warp's 16 x MT partial tile
// goes to part[wk][m][row] (rows padded to BRP floats); the block sums its WK tiles in warp order; with S > 1 the
// S blocks of the cluster sum their block tiles in rank order through distributed shared memory; then bias and
// the conversion to Y's dtype. Every thread of the block calls it (it holds the block and cluster barriers);
// only the kThreads `worker` threads (warps 0..7) carry partial tiles and do the sums.
template <class T, int MT, bool VEC>
__device__ __forceinline__ void reduce_store(float* part, const float (&acc)[MT / 8][4], const Params& p, int tid,
                                             bool worker, int wk, int wn, int g, int t, int64_t n0, int srank) {
  constexpr int NB = MT / 8;
  const int wkl = p.wk_log2;
  const int WK = 1 << wkl;
  const int brl = 7 - wkl;
  const int BR = 1 << brl;
  const int BRP = BR + kPartPad;
  const int S = p.s;
  const int m = p.m;
  // Partial tile of this warp -> part[wk][m][row], rows padded to BRP floats.
  if (worker) write_partials<NB>(part, acc, BRP, wk, wn * kWarpRows + g, t, m);
  __syncthreads();

  const int total = m * BR;
  const int out = p.out_dtype;
  if (S == 1) {
    for (int idx = tid; worker && idx < total; idx += kThreads) {
      const int mm = idx >> brl, r = idx & (BR - 1);
      const int64_t n = n0 + r;
      if (n >= p.n) continue;
      float v = sum_partials(part, BRP, MT, WK, mm, r);
      if (p.bias_kind) v += dev::load_bias<T>(p.bias, p.bias_kind, n);
      dev::store_y<VEC>(p.y, out, int64_t(mm) * p.ldy + n, v);
    }
  } else {
    for (int idx = tid; worker && idx < total; idx += kThreads) {
      const int mm = idx >> brl, r = idx & (BR - 1);
      part[mm * BRP + r] = sum_partials(part, BRP, MT, WK, mm, r);  // this block's sum, in place of warp 0's tile (only this thread reads it)
    }
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();  // every block's sums are visible cluster-wide
    for (int idx = srank * kThreads + tid; worker && idx < total; idx += S * kThreads) {
      const int mm = idx >> brl, r = idx & (BR - 1);
      const int64_t n = n0 + r;
      if (n >= p.n) continue;
      float v = cluster.map_shared_rank(part, 0)[mm * BRP + r];
      for (int q = 1; q < S; ++q) v += cluster.map_shared_rank(part, q)[mm * BRP + r];
      if (p.bias_kind) v += dev::load_bias<T>(p.bias, p.bias_kind, n);
      dev::store_y<VEC>(p.y, out, int64_t(mm) * p.ldy + n, v);
    }
    cluster.sync();  // keep this block's shared memory alive until the others have read it
  }
}

}  // namespace dev

// Grid: blocks_x = row_tiles * S (cluster (S, 1, 1) when S > 1), 256 threads.
template <class T, int MT, bool VEC>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) skinny_gemm_kernel(const Params p) {
  static_assert(MT % 8 == 0 && MT >= 8 && MT <= 64, "M tile");
  constexpr int NB = MT / 8;
  constexpr int D = depth_for(MT, VEC);
  // X joins the ring for small M tiles (its first touch misses L1 and would stall the warp); larger tiles
  // lack the registers and read X from L1 when the step is consumed.
  constexpr bool XR = NB <= 2;
  __shared__ float part[part_floats(MT)];

  const int tid = threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int wkl = p.wk_log2;
  const int WK = 1 << wkl;
  const int wk = warp & (WK - 1);
  const int wn = warp >> wkl;
  const int brl = 7 - wkl;  // log2(block rows), block rows = 128 / WK
  const int BR = 1 << brl;
  const int S = p.s;
  const int64_t rt = blockIdx.x / S;
  const int srank = static_cast<int>(blockIdx.x - rt * S);
  const int64_t n0 = rt * BR;             // first row of the block
  const int64_t nw = n0 + wn * kWarpRows;  // first row of the warp
  const int m = p.m;

  float acc[NB][4];
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) acc[nb][0] = acc[nb][1] = acc[nb][2] = acc[nb][3] = 0.f;

  const int64_t slice = int64_t(srank) * WK + wk;
  const int64_t sb = slice * p.sps;
  const int64_t se = min(sb + p.sps, p.k_steps);
  const bool active = nw < p.n && sb < se;
  // Rows past N / M are clamped onto the last one: valid memory, results never stored.
  const int64_t rlo = min(nw + g, p.n - 1), rhi = min(nw + g + 8, p.n - 1);
  const int64_t klane = 8 * t;
  const T* W = static_cast<const T*>(p.w);
  const T* wlo = W + rlo * p.ldw + klane;
  const T* whi = W + rhi * p.ldw + klane;
  const int64_t fe = min(se, p.k / kStepK);  // steps before fe lie entirely inside K

  // Before the dependency on the previous grid resolves (PDL), start this warp's first W bytes on their way
  // into L2 and let the next grid launch; X and Y are touched only after the wait.
  if (active) {
#pragma unroll
    for (int j = 0; j < 2 * D; ++j)
      if (sb + j < fe) {
        dev::prefetch_l2(wlo + (sb + j) * kStepK);
        dev::prefetch_l2(whi + (sb + j) * kStepK);
      }
  }
  pdl::launch_dependents();
  pdl::wait();

  if (active) {
    // X row of lane g in M-block nb is nb*8+g, clamped to M-1 (rows past M are computed, never stored).
    const T* xl = static_cast<const T*>(p.x) + klane;
    const T* xrow[NB];
#pragma unroll
    for (int nb = 0; nb < NB; ++nb) xrow[nb] = xl + int64_t(min(nb * 8 + g, m - 1)) * p.ldx;

    // Ring of D steps in registers, written so the load of step s + D follows the use of step s. ptxas still
    // places the D refills after the D mmas of a round (seen in the SASS), so a warp alternates a batch of D
    // steps in flight with their mmas. On the H200 the m16 tile (D = 4) streamed W faster than the m8 tile
    // (D = 8) at every decode shape and M <= 8 under graph replay (issue 4), so the default hands out the m16 tile for M <= 16.
    uint4 rw[D][2];
    uint4 rx[D][NB];
    int64_t s = sb;
#pragma unroll
    for (int j = 0; j < D; ++j)
      if (s + j < fe) dev::ring_load<T, NB, VEC, XR>(rw[j], rx[j], wlo, whi, xrow, (s + j) * kStepK, m);
    for (; s + 2 * D <= fe; s += D) {
#pragma unroll
      for (int j = 0; j < D; ++j) {
        dev::ring_step<T, NB, VEC, XR>(acc, rw[j], rx[j], xrow, (s + j) * kStepK, m);
        dev::ring_load<T, NB, VEC, XR>(rw[j], rx[j], wlo, whi, xrow, (s + j + D) * kStepK, m);
      }
    }
    // Fewer than 2D steps left: consume the ring, refilling only what exists.
#pragma unroll
    for (int j = 0; j < D; ++j)
      if (s + j < fe) {
        dev::ring_step<T, NB, VEC, XR>(acc, rw[j], rx[j], xrow, (s + j) * kStepK, m);
        if (s + j + D < fe) dev::ring_load<T, NB, VEC, XR>(rw[j], rx[j], wlo, whi, xrow, (s + j + D) * kStepK, m);
      }
#pragma unroll
    for (int j = 0; j < D; ++j)
      if (s + D + j < fe) dev::ring_step<T, NB, VEC, XR>(acc, rw[j], rx[j], xrow, (s + D + j) * kStepK, m);
    if (fe < se) dev::guarded_step<T, NB, VEC>(acc, wlo, whi, xl, p.ldx, g, fe * kStepK, klane, p.k, m);
  }

  dev::reduce_store<T, MT, VEC>(part, acc, p, tid, true, wk, wn, g, t, n0, srank);
}

}  // namespace tgemm::skinny
