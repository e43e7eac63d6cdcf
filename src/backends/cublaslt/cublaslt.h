#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tgemm/kernel.h"

namespace tgemm::cublaslt_detail {

// out[i] = float(in[i]) for i < n (bias widening for fp32-output problems).
Status widen_to_fp32(const void* in, DType t, int64_t n, float* out, cudaStream_t stream);

// How many heuristic answers are registered (cublaslt = answer 0, cublaslt_hN = answer N).
int heuristic_count();
// The heuristic's first `want` answers for p on the current device, as each algorithm's opaque bytes
// (cublasLtMatmulAlgo_t), in its order.
Status heuristic_algos(const Problem& p, int want, std::vector<std::array<uint64_t, 8>>* out);

}  // namespace tgemm::cublaslt_detail
