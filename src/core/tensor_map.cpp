#include "core/tensor_map.h"

#include <cuda_runtime_api.h>

#include "core/env.h"

namespace tgemm {
namespace {

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// Resolved once; null if the driver does not have it.
EncodeTiledFn driver_encoder() {
  static const EncodeTiledFn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return EncodeTiledFn(nullptr);
    }
    return reinterpret_cast<EncodeTiledFn>(f);
  }();
  return fn;
}

bool cache_enabled() {
  static const bool on = env_switch("TGEMM_TMA_CACHE");
  return on;
}

}  // namespace

namespace detail {

CUresult encode_tma_uncached(const TmaMatrix& m, CUtensorMap* out) {
  const EncodeTiledFn enc = driver_encoder();
  if (!enc) return CUDA_ERROR_NOT_SUPPORTED;
  const CUtensorMapDataType dt = m.dtype == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const bool view3 = m.units > 0;
  const cuuint64_t dims2[2] = {cuuint64_t(m.cols), cuuint64_t(m.rows)};
  const cuuint64_t dims3[3] = {64, cuuint64_t(m.rows), cuuint64_t(m.units)};
  const cuuint64_t strides[2] = {cuuint64_t(m.ld) * 2, 128};  // bytes: a row, then (3D) a 64-element unit
  const cuuint32_t box[3] = {64, m.box_rows, m.box_units};
  const cuuint32_t estr[3] = {1, 1, 1};
  return enc(out, dt, view3 ? 3 : 2, const_cast<void*>(m.ptr), view3 ? dims3 : dims2, strides, box, estr,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

CUresult encode_tma_cached(const TmaMatrix& m, CUtensorMap* out, TmaEncoder enc) {
  // Per host thread: no lock on the launch path. Round-robin replacement; a serving loop repeats a handful of specs
  // (each layer's W, the activation buffers of a caching allocator).
  struct Cache {
    TmaMatrix key[kTmaCacheSlots];
    CUtensorMap map[kTmaCacheSlots];
    bool used[kTmaCacheSlots] = {};
    int next = 0;
  };
  thread_local Cache c;
  for (int i = 0; i < kTmaCacheSlots; ++i)
    if (c.used[i] && c.key[i] == m) {
      *out = c.map[i];
      return CUDA_SUCCESS;
    }
  const CUresult r = enc(m, out);
  if (r != CUDA_SUCCESS) return r;
  const int i = c.next;
  c.next = (c.next + 1) % kTmaCacheSlots;
  c.key[i] = m;
  c.map[i] = *out;
  c.used[i] = true;
  return r;
}

}  // namespace detail

CUresult encode_tma(const TmaMatrix& m, CUtensorMap* out) {
  return cache_enabled() ? detail::encode_tma_cached(m, out, detail::encode_tma_uncached) : detail::encode_tma_uncached(m, out);
}

}  // namespace tgemm
