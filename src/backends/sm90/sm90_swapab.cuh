// The sm90 small-M skeleton: Y[M,N] = X[M,K] * W[N,K]^T (+ bias) computed as Y^T = W * X^T ("swap AB"), with K
// split across the CTAs of a thread-block cluster and the partial tiles summed through distributed shared memory.
//
// Why: at M <= 256 the persistent kernel's output tiles are few (256 x 4096 is 64 tiles of 64x256 on 132 SMs) and
// each runs the whole K alone, so half the SMs idle; its split-K path pays fp32 partials through L2, a counter
// memset and a fence per unit (sm90_kernel.cuh; SM90_NOTES.md run 6). Here W supplies the 64-row side of wgmma
// (m64), the M tokens the N side (nMT, MT = 64 or 128), and the S CTAs of a cluster (S = 1 or 2 chosen, up to 8
// forced) each take 1/S of the k-steps of the same output tile. The cluster's partials never leave the SMs.
//
// Roles (288 threads): warpgroups 0 and 1 consume, warp 8 produces (one thread issues the TMA loads of W and X into
// a ring of stages). With 128 W rows per CTA the two warpgroups take 64 rows each; with 64 (the registered ones:
// twice the CTAs for a given N, which measured faster, SM90_NOTES.md session 5) they share the rows and take the
// even and odd k-steps.
// After the main loop:
//   1. every consumer warpgroup has retired its wgmma (named barrier), so the ring is free: the fp32 accumulators go
//      into this CTA's partial buffer P[rows][MT], which aliases the stage ring (with split k-steps: warpgroup 0
//      writes, then warpgroup 1 adds, a fixed order);
//   2. cluster barrier: every CTA's P is complete;
//   3. CTA rank r sums rows [r * rows / S, (r + 1) * rows / S) of every rank's P in rank order (the same bits
//      whichever CTA runs first), adds bias in fp32, converts and stores them to Y;
//   4. cluster barrier: no CTA exits while a peer still reads its P.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/sm90/sm90_config.h"
#include "backends/sm90/sm90_epilogue.cuh"
#include "core/ptx.cuh"
#include "core/wgmma.cuh"

namespace tgemm::sm90 {

enum class SwapAbRole : uint8_t { consumer, producer };

template <DType In, int MT, int Stages, int WRows = 128>
struct SwapAbTraits {
  static constexpr DType kIn = In;
  static constexpr int kMT = MT;       // tokens (rows of X) per CTA: the wgmma N
  static constexpr int kWRows = WRows;  // rows of W per CTA: 128 = two consumer warpgroups of m64 side by side
  // With 64 W rows the two consumer warpgroups share the rows and split the CTA's k-steps between them (even and
  // odd), adding their accumulators in shared memory: twice the CTAs for a given N, no cluster needed for that.
  static constexpr int kRowGroups = WRows / 64;
  static constexpr int kKGroups = 2 / kRowGroups;
  static constexpr int kReadersPerStage = 4 * kRowGroups;  // consumer warps that read (and release) each stage
  static constexpr int kBK = 64;       // one 128-byte swizzle row of 16-bit elements
  static constexpr int kStages = Stages;
  static constexpr int kMaxSplits = 8;  // portable cluster size
  static constexpr int kConsumerThreads = 256;
  static constexpr int kThreads = kConsumerThreads + 32;
  static constexpr int kAccRegs = MT / 2;

  static constexpr int kWBytes = kWRows * kBK * 2;
  static constexpr int kXBytes = MT * kBK * 2;
  static constexpr int kStageBytes = kWBytes + kXBytes;
  static constexpr int kOffW = 0;
  static constexpr int kOffX = kStages * kWBytes;
  static constexpr int kRingBytes = kStages * kStageBytes;
  // P[WRows][MT] fp32 with 32 bytes of padding per row: a warp's float2 stores of the accumulator fragment (8 rows x
  // 4 column pairs) then take the minimum two wavefronts instead of conflicting 8 ways.
  static constexpr int kPRowBytes = MT * 4 + 32;
  static constexpr int kPBytes = kWRows * kPRowBytes;
  static constexpr int kOffBars = (kRingBytes > kPBytes ? kRingBytes : kPBytes);
  static constexpr int kNumBars = 2 * kStages;
  // + kSmemAlign: the kernel aligns its base. One CTA per SM: run 40 measured two per SM (half the stages each) no faster.
  static constexpr int kSmemBytes = kOffBars + kNumBars * 8 + kSmemAlign;

  static_assert(In == DType::bf16 || In == DType::fp16, "inputs are 16-bit");
  static_assert(MT == 64 || MT == 128 || MT == 256, "wgmma N of 64, 128 or 256 tokens");
  static_assert(WRows == 64 || WRows == 128, "one or two m64 row groups");
  static_assert(kAccRegs <= 128, "accumulators within the register budget");
  static_assert(kWBytes % 1024 == 0 && kXBytes % 1024 == 0, "stage buffers keep the 1024-byte swizzle alignment");
  static_assert(kSmemBytes <= kMaxDynamicSmem, "shared memory over the sm_90 227 KiB limit");
  static_assert(kStages >= 2, "double buffering at least");
  static_assert(kPRowBytes % 16 == 0, "P rows 16-byte aligned for the float4 reads of the reduction");

  static constexpr Config kConfig{In, MT, WRows, kBK, Stages, 1, 1, 64, EpiMode::direct, false, true, 0, true};
};

namespace swapab {

__device__ __forceinline__ float4 ld_cluster_f4(uint32_t addr, uint32_t cta) {
  float4 v;
  asm volatile(
      "{\n.reg .b32 ra;\n"
      "mapa.shared::cluster.u32 ra, %4, %5;\n"
      "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [ra];\n}\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(addr), "r"(cta)
      : "memory");
  return v;
}

template <OutKind Out>
__device__ __forceinline__ void store_out(void* y, int64_t off, float v) {
  if constexpr (Out == OutKind::fp32) {
    static_cast<float*>(y)[off] = v;
  } else if constexpr (Out == OutKind::bf16) {
    static_cast<__nv_bfloat16*>(y)[off] = __float2bfloat16_rn(v);
  } else {
    static_cast<__half*>(y)[off] = __float2half_rn(v);
  }
}

// Step 3 of the header: this CTA's share of the tile's W rows, all MT tokens. Thread i takes row i % R and tokens
// [4q, 4q + 4) with q = i / R, so a warp's stores for one token are consecutive columns of Y.
template <class T, OutKind Out>
__device__ __forceinline__ void reduce_store(const EpilogueParams& ep, uint32_t p_base, uint32_t rank, uint32_t splits,
                                             uint32_t n0, uint32_t m0, uint32_t tid) {
  const uint32_t rows = T::kWRows / splits;  // splits is a power of two <= 8: 16 rows at least
  const uint32_t items = rows * (T::kMT / 4);
  for (uint32_t i = tid; i < items; i += T::kConsumerThreads) {
    const uint32_t r = rank * rows + i % rows, q = i / rows;
    const uint32_t n = n0 + r;
    if (n >= ep.n) continue;
    const uint32_t addr = p_base + r * T::kPRowBytes + q * 16;
    float4 s = ld_cluster_f4(addr, 0);
    for (uint32_t c = 1; c < splits; ++c) {
      const float4 v = ld_cluster_f4(addr, c);
      s.x += v.x;
      s.y += v.y;
      s.z += v.z;
      s.w += v.w;
    }
    const float b = bias_at<T::kIn == DType::bf16>(ep, n);
    const float v[4] = {s.x + b, s.y + b, s.z + b, s.w + b};
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const uint32_t m = m0 + 4 * q + u;
      if (m < ep.m) store_out<Out>(ep.y, int64_t(m) * ep.ldy + int64_t(n), v[u]);
    }
  }
}

}  // namespace swapab

// grid (S * n_tiles, m_tiles), clusters of (S, 1, 1); `k` the reduction length.
template <class T>
__global__ void __launch_bounds__(T::kThreads, 1)
    swapab_kernel(const __grid_constant__ CUtensorMap tmap_x, const __grid_constant__ CUtensorMap tmap_w,
                  const EpilogueParams ep, const uint32_t k) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int S = T::kStages;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // Warp-uniform by broadcast, so the barrier addresses and descriptors derived from them live in uniform registers
  // (as in gemm_kernel, sm90_kernel.cuh).
  const uint32_t base = __shfl_sync(0xffffffffu, smem_align_up(ptx::smem_addr(smem_raw)), 0);
  const uint32_t full = base + T::kOffBars, empty = full + 8 * S;
  const uint32_t warp = __shfl_sync(0xffffffffu, threadIdx.x / 32, 0), lane = threadIdx.x % 32;
  const SwapAbRole role = warp < 8 ? SwapAbRole::consumer : SwapAbRole::producer;

  const uint32_t splits = ep.splits;
  const uint32_t rank = ptx::cluster_ctarank();
  const uint32_t n0 = (blockIdx.x / splits) * T::kWRows;
  const uint32_t m0 = blockIdx.y * T::kMT;
  const uint32_t num_k = (k + T::kBK - 1) / T::kBK;
  const uint32_t kb = uint32_t(uint64_t(rank) * num_k / splits), ke = uint32_t(uint64_t(rank + 1) * num_k / splits);

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      ptx::mbar_init(full + 8 * s, 1);
      ptx::mbar_init(empty + 8 * s, T::kReadersPerStage);  // one arrival per reading consumer warp
    }
    ptx::fence_mbar_init();
    ptx::prefetch_tmap(&tmap_x);
    ptx::prefetch_tmap(&tmap_w);
  }
  __syncthreads();

  if (role == SwapAbRole::producer) {
    if (lane == 0) {
      uint32_t s = 0, phase = 0;
      for (uint32_t kt = kb; kt < ke; ++kt) {
        ptx::mbar_wait(empty + 8 * s, phase ^ 1);
        ptx::mbar_arrive_expect_tx(full + 8 * s, T::kStageBytes);
        const int32_t kc = int32_t(kt * T::kBK);
        // Rows past N or M are zero-filled by TMA (and never stored); K past k likewise contributes zeros.
        ptx::tma_load_2d(base + T::kOffW + s * T::kWBytes, &tmap_w, full + 8 * s, kc, int32_t(n0));
        ptx::tma_load_2d(base + T::kOffX + s * T::kXBytes, &tmap_x, full + 8 * s, kc, int32_t(m0));
        if (++s == S) {
          s = 0;
          phase ^= 1;
        }
      }
    }
  } else {
    using Mma = Wgmma<T::kMT, T::kIn == DType::bf16>;
    const uint32_t g = warp / 4;                  // consumer warpgroup
    const uint32_t rg = g % T::kRowGroups;        // its 64 W rows: [64 rg, 64 rg + 64)
    const uint32_t kg = g / T::kRowGroups;        // its share of the k-steps: i % kKGroups == kg
    float acc[T::kAccRegs];
#pragma unroll
    for (int i = 0; i < T::kAccRegs; ++i) acc[i] = 0.f;  // a warpgroup may own no k-step
    // Descriptors as low words stepped with 32-bit adds (wgmma::desc_sw128_lo), and the ring position carried from
    // k-step to k-step instead of divided out of i: the k-step went from 100-112 SASS instructions to about half.
    const uint32_t a_lo0 = wgmma::desc_sw128_lo(base + T::kOffW + rg * 64 * 128);
    const uint32_t b_lo0 = wgmma::desc_sw128_lo(base + T::kOffX);
    const uint32_t nks = ke - kb;
    uint32_t prev = 0;
    uint32_t s = kg, phase = 0;  // ring slot and parity of k-step i (kg < kKGroups <= S)
    for (uint32_t i = kg; i < nks; i += T::kKGroups) {
      ptx::mbar_wait(full + 8 * s, phase);
#pragma unroll
      for (int r = 0; r < T::kAccRegs; ++r) ptx::reg_fence(acc[r]);
      wgmma::fence();
      const uint32_t a_off = s * uint32_t(T::kWBytes >> 4), b_off = s * uint32_t(T::kXBytes >> 4);
#pragma unroll
      for (int kk = 0; kk < T::kBK / 16; ++kk)
        Mma::mma(acc, wgmma::desc_sw128_of(a_lo0 + a_off + 2 * kk), wgmma::desc_sw128_of(b_lo0 + b_off + 2 * kk), 1u);
      wgmma::commit();
      // One k-step in flight; the one before it has finished reading its slot.
      if (i >= kg + T::kKGroups) {
        wgmma::wait<1>();
        if (lane == 0) ptx::mbar_arrive(empty + 8 * prev);
      }
      prev = s;
      s += T::kKGroups;
      if (s >= uint32_t(S)) {
        s -= S;
        phase ^= 1;
      }
    }
    wgmma::wait<0>();
#pragma unroll
    for (int r = 0; r < T::kAccRegs; ++r) ptx::reg_fence(acc[r]);
    // Step 1: P aliases the ring, so every warpgroup's wgmma must have retired before any writes. With the k-steps
    // split between the warpgroups, k-group 0 writes P and k-group 1 then adds its accumulators (a fixed order).
    ptx::named_bar_sync(1, T::kConsumerThreads);
    const uint32_t wrow = rg * 64 + (warp % 4) * 16 + lane / 4;
    const uint32_t p = base + wrow * T::kPRowBytes + (lane % 4) * 8;
#pragma unroll
    for (uint32_t pass = 0; pass < uint32_t(T::kKGroups); ++pass) {
      if (pass > 0) ptx::named_bar_sync(1, T::kConsumerThreads);
      if (kg != pass) continue;
#pragma unroll
      for (int j = 0; j < T::kMT / 8; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const uint32_t a = p + h * 8 * T::kPRowBytes + j * 32;
          float x = acc[4 * j + 2 * h], y = acc[4 * j + 2 * h + 1];
          if (pass > 0) {
            const float2 o = ptx::ld_shared_f2(a);
            x += o.x;
            y += o.y;
          }
          asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(a), "f"(x), "f"(y) : "memory");
        }
      }
    }
  }
  // Step 2 (every thread of every CTA of the cluster).
  ptx::cluster_sync();
  if (role == SwapAbRole::consumer) {
    const uint32_t tid = threadIdx.x;
    if (ep.out == OutKind::bf16) {
      swapab::reduce_store<T, OutKind::bf16>(ep, base, rank, splits, n0, m0, tid);
    } else if (ep.out == OutKind::fp16) {
      swapab::reduce_store<T, OutKind::fp16>(ep, base, rank, splits, n0, m0, tid);
    } else {
      swapab::reduce_store<T, OutKind::fp32>(ep, base, rank, splits, n0, m0, tid);
    }
  }
  // Step 4.
  ptx::cluster_sync();
#endif
}

}  // namespace tgemm::sm90
