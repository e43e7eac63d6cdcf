// TMA tensor maps of the operands, shared by every backend that loads with TMA (sm90, skinny).
//
// Every map tgemm builds has the same form: a row-major [rows, cols] 16-bit matrix (cols = K, contiguous) read in
// boxes of 64 columns (one 128-byte swizzle row) x box_rows, 128-byte swizzle, zeros past the edges (the K tail).
// With units > 0 it is the 3D view [units][rows][64] of the same matrix (element (c, r, u) at ptr + r*ld + 64u + c,
// full 64-column units only) in boxes of 64 x box_rows x box_units.
//
// Encoding is host work on every launch (cuTensorMapEncodeTiled, 2 to 4 maps per launch). A map is a pure function
// of its spec, so each host thread keeps its last kTmaCacheSlots encodes and hands a repeated spec the same bytes;
// TGEMM_TMA_CACHE=0 encodes every time (A/B timing). Measured on the H200 host (run 36, tgemm_bench_host): the 4
// maps of a persistent skinny launch take 355 ns to encode and 105 ns from the cache. That is small: it is not what
// makes that kernel's plain launches 5-7 us slower than its graph replays (plain decode times with and without the
// cache were within noise, geometric mean 0.999).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "tgemm/types.h"

namespace tgemm {

struct TmaMatrix {
  const void* ptr = nullptr;
  DType dtype = DType::bf16;  // bf16 or fp16
  int64_t rows = 0, cols = 0, ld = 0;
  uint32_t box_rows = 0;
  int64_t units = 0;  // > 0: the 3D unit view with this many full 64-column units
  uint32_t box_units = 0;
  bool operator==(const TmaMatrix&) const = default;
};

// cuTensorMapEncodeTiled for `m` (through the runtime's driver entry point: no link-time libcuda), or the cached
// bytes of the same spec. CUDA_ERROR_NOT_SUPPORTED if the driver has no such entry point.
CUresult encode_tma(const TmaMatrix& m, CUtensorMap* out);

namespace detail {
inline constexpr int kTmaCacheSlots = 16;
using TmaEncoder = CUresult (*)(const TmaMatrix&, CUtensorMap*);
// The cache in front of `enc` (encode_tma passes the driver's); failed encodes are not kept. For the CPU tests.
CUresult encode_tma_cached(const TmaMatrix& m, CUtensorMap* out, TmaEncoder enc);
// The driver's encode without the cache (the host-overhead benchmark times both).
CUresult encode_tma_uncached(const TmaMatrix& m, CUtensorMap* out);
}  // namespace detail

}  // namespace tgemm
