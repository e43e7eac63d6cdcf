// Device-side element types and conversions shared by the backends.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "tgemm/types.h"

namespace tgemm {

template <DType T> struct ElemOf;
template <> struct ElemOf<DType::bf16> { using type = __nv_bfloat16; };
template <> struct ElemOf<DType::fp16> { using type = __half; };
template <> struct ElemOf<DType::fp32> { using type = float; };
template <DType T> using Elem = typename ElemOf<T>::type;

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(float v) { return v; }

template <class T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }

// Calls f.template operator()<T>() with T the element type of `t`.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::bf16: return f.template operator()<__nv_bfloat16>();
    case DType::fp16: return f.template operator()<__half>();
    default: return f.template operator()<float>();
  }
}

}  // namespace tgemm
