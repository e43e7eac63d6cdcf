#pragma once

#include "tgemm/kernel.h"

namespace tgemm::cublaslt_detail {

// out[i] = float(in[i]) for i < n (bias widening for fp32-output problems).
Status widen_to_fp32(const void* in, DType t, int64_t n, float* out, cudaStream_t stream);

}  // namespace tgemm::cublaslt_detail
