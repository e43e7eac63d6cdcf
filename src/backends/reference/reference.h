// The reference backend: plain CUDA, 64-bit indexing, fp32 accumulation. Used by tests, `bench`, `tune`
// and `check` to verify results; never chosen for speed.
#pragma once

#include "tgemm/kernel.h"

namespace tgemm::reference {

// Y = bias broadcast over rows (or 0): the whole answer when K == 0.
Status fill_bias(const GemmArgs& a, cudaStream_t stream);

// Y_ref[M, N] (fp32, ld = N) = X·Wᵀ + bias for rows [row0, row0 + rows) of the problem, in fp32.
Status gemm_fp32(const GemmArgs& a, int64_t row0, int64_t rows, float* y_ref, cudaStream_t stream);

}  // namespace tgemm::reference
