// skinny backend: the fp16 instantiations (one file per input dtype so the two compile in parallel).
#include "backends/skinny/skinny_ws_kernel.cuh"

namespace tgemm::skinny {

const void* kernel_fp16(int max_m, bool vec) {
  using T = __half;
  if (!vec) return max_m == 64 ? reinterpret_cast<const void*>(&skinny_gemm_kernel<T, 64, false>) : nullptr;
  switch (max_m) {
    case 8: return reinterpret_cast<const void*>(&skinny_gemm_kernel<T, 8, true>);
    case 16: return reinterpret_cast<const void*>(&skinny_gemm_kernel<T, 16, true>);
    case 32: return reinterpret_cast<const void*>(&skinny_gemm_kernel<T, 32, true>);
    case 64: return reinterpret_cast<const void*>(&skinny_gemm_kernel<T, 64, true>);
    default: return nullptr;
  }
}

// The TMA variant: one M tile (16), the one the register kernel's default uses for M <= 16.
const void* kernel_tma_fp16(int max_m) {
  return max_m == 16 ? reinterpret_cast<const void*>(&skinny_tma_kernel<__half, 16>) : nullptr;
}

// The persistent variant: M tiles 16 (M <= 8 skips the second mma block at run time), 32 and 64.
const void* kernel_ws_fp16(int max_m) {
  switch (max_m) {
    case 16: return reinterpret_cast<const void*>(&skinny_ws_kernel<__half, 16>);
    case 32: return reinterpret_cast<const void*>(&skinny_ws_kernel<__half, 32>);
    case 64: return reinterpret_cast<const void*>(&skinny_ws_kernel<__half, 64>);
    default: return nullptr;
  }
}

}  // namespace tgemm::skinny
