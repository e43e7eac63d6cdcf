// The __global__ function that serves a skinny Config, for input type T; null where none is built. Each dtype's
// translation unit (skinny_bf16.cu, skinny_fp16.cu) instantiates it once, so the two compile in parallel.
#pragma once

#include "backends/skinny/skinny_config.h"
#include "backends/skinny/skinny_rs_kernel.cuh"
#include "backends/skinny/skinny_ws_kernel.cuh"

namespace tgemm::skinny {

template <class T>
const void* kernel_for(const Config& c) {
  auto fn = [](auto* f) { return reinterpret_cast<const void*>(f); };
  if (c.rs) {
    switch (c.max_m) {
      case 1: return fn(&skinny_rs_kernel<T, 1>);
      case 2: return fn(&skinny_rs_kernel<T, 2>);
      case 4: return fn(&skinny_rs_kernel<T, 4>);
      default: return nullptr;
    }
  }
  if (c.ws && c.wg) {  // the wgmma path at M tiles 8 and 16 (skinny_config.h, ws_wide), 1 or 2 units per stage
    switch (c.max_m * 8 + c.upw) {
      case 8 * 8 + 1: return fn(&skinny_ws_kernel<T, 8, true, 1>);
      case 8 * 8 + 2: return fn(&skinny_ws_kernel<T, 8, true, 2>);
      case 16 * 8 + 1: return fn(&skinny_ws_kernel<T, 16, true, 1>);
      case 16 * 8 + 2: return fn(&skinny_ws_kernel<T, 16, true, 2>);
      default: return nullptr;
    }
  }
  if (c.ws) {  // M tiles 16 (M <= 8 skips the second mma block at run time), 32 and 64
    switch (c.max_m) {
      case 16: return fn(&skinny_ws_kernel<T, 16>);
      case 32: return fn(&skinny_ws_kernel<T, 32>);
      case 64: return fn(&skinny_ws_kernel<T, 64>);
      default: return nullptr;
    }
  }
  if (c.tma) return c.max_m == 16 ? fn(&skinny_tma_kernel<T, 16>) : nullptr;  // the register kernel's M <= 16 tile
  if (!c.vec) return c.max_m == 64 ? fn(&skinny_gemm_kernel<T, 64, false>) : nullptr;
  switch (c.max_m) {
    case 8: return fn(&skinny_gemm_kernel<T, 8, true>);
    case 16: return fn(&skinny_gemm_kernel<T, 16, true>);
    case 32: return fn(&skinny_gemm_kernel<T, 32, true>);
    case 64: return fn(&skinny_gemm_kernel<T, 64, true>);
    default: return nullptr;
  }
}

}  // namespace tgemm::skinny
