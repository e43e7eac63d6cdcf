// Epilogue pieces: bias in fp32, conversion to the output dtype, and the stores. Every Y offset is formed by
// y_offset<IndexT>, the one place that decides the index width the kernel's Limits declare (the TMA-store epilogue
// forms none: TMA addresses Y from int32 coordinates).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backends/sm90/sm90_config.h"
#include "core/ptx.cuh"

namespace tgemm::sm90 {

// Run-time epilogue parameters: one instantiation handles every output dtype and bias kind. The kernel branches
// once per tile to an epilogue templated on the output dtype, so the per-element code has no branches, while
// the build compiles each configuration once instead of nine times.
struct EpilogueParams {
  void* y = nullptr;
  int64_t ldy = 0;  // elements
  const void* bias = nullptr;
  uint32_t m = 0, n = 0;
  OutKind out = OutKind::bf16;
  BiasKind bias_kind = BiasKind::none;
  // Split-K (Traits::kSplitK): the number of k-ranges per split tile, and with splits > 1 one arrival counter per
  // split tile (zero at the launch, left zero by the tile's last arrival), `splits` fp32 partial tiles per split
  // tile, and the number of split tiles (the last ones of the scheduler's order; last in the struct, so the other
  // fields keep their parameter offsets and the kernels without split-K their SASS).
  uint32_t splits = 1;
  uint32_t* counters = nullptr;
  float* partials = nullptr;
  uint32_t split_tiles = 0;
  uint32_t by_columns = 0;  // the split tiles run as column halves (SplitPlan::by_columns)
  uint32_t l2_hints = 0;    // L2Hint bits: the operands whose loads ask L2 to keep them
};

// EpilogueParams::l2_hints: the operands whose TMA loads ask L2 to keep their lines (evict_last); the others load
// without a cache hint. (Bit 1 was Y's stores with evict_first: no gain, and 7% slower at M = 768000, run 153.)
enum L2Hint : uint32_t { kL2HintW = 2, kL2HintX = 4 };

// Element offset of Y[row, col]. The int32 variant reproduces the seed incident deliberately: the product is
// formed in 32-bit wrapping arithmetic and sign-extended, so past (M-1)*ldy + N-1 > INT32_MAX it really points
// before Y, exactly like the kernel in seed/. The Limits of i32 kernels exclude such problems; nothing else does.
template <class IndexT>
__device__ __forceinline__ int64_t y_offset(uint32_t row, uint32_t col, int64_t ldy) {
  if constexpr (sizeof(IndexT) == 4) {
    return int64_t(int32_t(row * uint32_t(ldy) + col));
  } else {
    return int64_t(row) * ldy + int64_t(col);
  }
}

template <bool Bf16>
__device__ __forceinline__ float in_to_float(uint16_t v) {
  if constexpr (Bf16) {
    return __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(&v));
  } else {
    return __half2float(*reinterpret_cast<const __half*>(&v));
  }
}

// bias[col] in fp32: the bias is fp32 or the input dtype; 0 without bias.
template <bool Bf16>
__device__ __forceinline__ float bias_at(const EpilogueParams& ep, uint32_t col) {
  if (ep.bias_kind == BiasKind::fp32) return __ldg(static_cast<const float*>(ep.bias) + col);
  if (ep.bias_kind == BiasKind::same_as_input) return in_to_float<Bf16>(__ldg(static_cast<const unsigned short*>(ep.bias) + col));
  return 0.f;
}

template <OutKind Out>
__device__ __forceinline__ uint32_t pack_out_pair(float a, float b) {
  uint32_t r;
  if constexpr (Out == OutKind::bf16) {
    __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
    r = *reinterpret_cast<uint32_t*>(&v);
  } else {
    __half2 v = __floats2half2_rn(a, b);
    r = *reinterpret_cast<uint32_t*>(&v);
  }
  return r;
}

// The wgmma m64nN accumulator fragment: register 4j+{0,1} of a thread holds row (warp*16 + lane/4), columns
// 8j + 2*(lane%4) + {0,1}; registers 4j+{2,3} the same columns 8 rows further down.
template <class T>
struct Epilogue {
  static constexpr int kBN = T::kBN;
  static constexpr int kMSub = T::kMSub;
  static constexpr int kWgRows = T::kWgRows;
  static constexpr bool kInBf16 = T::kIn == DType::bf16;
  static constexpr int kBiasRegs = (kBN + 127) / 128;
  using IndexT = typename T::IndexT;

  // At tile start each of the warpgroup's 128 threads fetches its share of the tile's bias (zero past N or
  // without bias). The loads complete during the main loop; stage_bias then parks the values in shared memory,
  // where the epilogue reads them without exposing a global load's latency per column pair.
  __device__ static void load_bias(float (&b)[kBiasRegs], const EpilogueParams& ep, uint32_t n0, uint32_t tid) {
#pragma unroll
    for (int i = 0; i < kBiasRegs; ++i) {
      const uint32_t c = tid + 128 * i, col = n0 + c;
      b[i] = c < kBN && col < ep.n ? bias_at<kInBf16>(ep, col) : 0.f;
    }
  }
  __device__ static void stage_bias(const float (&b)[kBiasRegs], uint32_t bias_smem, uint32_t tid) {
#pragma unroll
    for (int i = 0; i < kBiasRegs; ++i) {
      const uint32_t c = tid + 128 * i;
      if (c < kBN) ptx::st_shared_f32(bias_smem + c * 4, b[i]);
    }
  }

  // Byte offset of 16-byte chunk `chunk` (columns 8 * chunk ...) of staging row `row`. Staged: padded rows. TMA: one
  // [kWgRows][128 B] box per 64 columns, chunk c of row r at c ^ (r % 8) (the 128-byte swizzle the store undoes),
  // which also puts stmatrix's 8 rows of one chunk on distinct banks.
  __device__ static uint32_t staging_offset(uint32_t row, uint32_t chunk) {
    if constexpr (T::kTmaStore) {
      return (chunk / 8) * (kWgRows * 128) + row * 128 + ((chunk % 8) ^ (row % 8)) * 16;
    } else {
      return row * T::kStagingRowBytes + chunk * 16;
    }
  }

  // Consumer side, staged mode (16-bit outputs): bias + convert, then stmatrix into this warpgroup's staging
  // buffer. One stmatrix.x4 stores two n8 column blocks of the warp's 16 rows (top and bottom 8 rows of each).
  // Column pairs [J0, J0 + JN) of 16 columns each, i.e. tile columns [16 * J0, 16 * (J0 + JN)), land at staging
  // column 0 (a ping-pong tile staged in halves passes each half in turn).
  template <OutKind Out, int J0 = 0, int JN = kBN / 16>
  __device__ static void to_staging(float (&acc)[kMSub][kBN / 2], uint32_t staging, uint32_t bias_smem,
                                    uint32_t warp, uint32_t lane) {
    static_assert(J0 >= 0 && JN >= 1 && J0 + JN <= kBN / 16 && 16 * JN <= T::kChunkCols, "chunk inside the tile");
    const uint32_t colq = 2 * (lane % 4);
    const uint32_t mi = lane / 8;  // which of the four matrices this lane addresses
    const uint32_t row_in = warp * 16 + (mi % 2) * 8 + lane % 8;
#pragma unroll
    for (int jj = J0; jj < J0 + JN; ++jj) {
      const int j0 = 2 * jj, j1 = 2 * jj + 1;
      const float2 b0 = ptx::ld_shared_f2(bias_smem + (j0 * 8 + colq) * 4);
      const float2 b1 = ptx::ld_shared_f2(bias_smem + (j1 * 8 + colq) * 4);
#pragma unroll
      for (int ms = 0; ms < kMSub; ++ms) {
        const uint32_t r0 = pack_out_pair<Out>(acc[ms][4 * j0 + 0] + b0.x, acc[ms][4 * j0 + 1] + b0.y);
        const uint32_t r1 = pack_out_pair<Out>(acc[ms][4 * j0 + 2] + b0.x, acc[ms][4 * j0 + 3] + b0.y);
        const uint32_t r2 = pack_out_pair<Out>(acc[ms][4 * j1 + 0] + b1.x, acc[ms][4 * j1 + 1] + b1.y);
        const uint32_t r3 = pack_out_pair<Out>(acc[ms][4 * j1 + 2] + b1.x, acc[ms][4 * j1 + 3] + b1.y);
        ptx::stmatrix_x4(staging + staging_offset(ms * 64 + row_in, 2 * (jj - J0) + mi / 2), r0, r1, r2, r3);
      }
    }
    // The TMA store reads the buffer through the async proxy.
    if constexpr (T::kTmaStore) ptx::fence_proxy_async_shared();
  }

  // Storer side, staged mode: 16-byte chunks of the staged rows (kChunkCols columns from n0, none from ep.n on) to
  // Y. Consecutive threads take consecutive chunks of a row, so each warp writes whole contiguous row segments.
  __device__ static void store_staged(uint32_t staging, const EpilogueParams& ep, uint32_t row0, uint32_t n0,
                                      uint32_t tid) {
    constexpr uint32_t kChunksPerRow = T::kChunkCols / 8;
    constexpr uint32_t kChunks = kWgRows * kChunksPerRow;
    char* const y = static_cast<char*>(ep.y);
#pragma unroll 4
    for (uint32_t i = tid; i < kChunks; i += T::kStorerThreads) {
      const uint32_t r = i / kChunksPerRow, c = i % kChunksPerRow;
      const uint4 v = ptx::ld_shared_v4(staging + r * T::kStagingRowBytes + c * 16);
      const uint32_t row = row0 + r, col = n0 + c * 8;
      if (row < ep.m && col < ep.n) {
        char* p = y + y_offset<IndexT>(row, col, ep.ldy) * 2;
        if (col + 8 <= ep.n) {
          ptx::st_global_v4(p, v);
        } else {
          const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (uint32_t e = 0; e < 8; ++e) {
            if (col + e < ep.n) reinterpret_cast<uint16_t*>(p)[e] = uint16_t(w[e / 2] >> (16 * (e % 2)));
          }
        }
      }
    }
  }

  // Storer side, TMA mode (one thread): the staged rows [row0, row0 + kWgRows) x columns [n0, n0 + kChunkCols) to
  // Y, one store per 64-column box; returns once the buffer has been read (it may be rewritten then). Boxes from
  // ep.n on are skipped (a column-tail half's bound is a box edge), the rest clipped by TMA at the matrix edge.
  __device__ static void store_tma(uint32_t staging, const CUtensorMap* tmap_y, const EpilogueParams& ep,
                                   uint32_t row0, uint32_t n0) {
    if (row0 >= ep.m) return;
#pragma unroll
    for (int b = 0; b < T::kChunkCols / 64; ++b) {
      const uint32_t col = n0 + 64 * b;
      if (col < ep.n) ptx::tma_store_2d(tmap_y, staging + b * (kWgRows * 128), int32_t(col), int32_t(row0));
    }
    ptx::bulk_commit_group();
    ptx::bulk_wait_group_read<0>();
  }

  // Consumer side, direct mode (and every fp32 output): bias + convert + store from registers.
  template <OutKind Out>
  __device__ static void to_global(float (&acc)[kMSub][kBN / 2], const EpilogueParams& ep, uint32_t bias_smem,
                                   uint32_t row0, uint32_t n0, uint32_t warp, uint32_t lane) {
    char* const y = static_cast<char*>(ep.y);
    const uint32_t colq = 2 * (lane % 4);
    const bool full = row0 + kWgRows <= ep.m && n0 + kBN <= ep.n;  // no masking needed anywhere in the tile
#pragma unroll
    for (int j = 0; j < kBN / 8; ++j) {
      const uint32_t col = n0 + j * 8 + colq;
      const float2 b = ptx::ld_shared_f2(bias_smem + (j * 8 + colq) * 4);
      const bool any = full || col < ep.n;
      const bool pair = full || col + 1 < ep.n;
#pragma unroll
      for (int ms = 0; ms < kMSub; ++ms) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const uint32_t row = row0 + ms * 64 + warp * 16 + lane / 4 + h * 8;
          if (!(any && (full || row < ep.m))) continue;
          const float v0 = acc[ms][4 * j + 2 * h] + b.x, v1 = acc[ms][4 * j + 2 * h + 1] + b.y;
          const int64_t off = y_offset<IndexT>(row, col, ep.ldy);
          if constexpr (Out == OutKind::fp32) {
            float* p = reinterpret_cast<float*>(y) + off;
            if (pair) {
              *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
            } else {
              p[0] = v0;
            }
          } else {
            uint16_t* p = reinterpret_cast<uint16_t*>(y) + off;
            const uint32_t packed = pack_out_pair<Out>(v0, v1);
            if (pair) {
              *reinterpret_cast<uint32_t*>(p) = packed;
            } else {
              p[0] = uint16_t(packed);
            }
          }
        }
      }
    }
  }
};

}  // namespace tgemm::sm90
