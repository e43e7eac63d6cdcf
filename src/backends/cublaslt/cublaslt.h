#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "registry/registry.h"
#include "tgemm/kernel.h"

namespace tgemm::cublaslt_detail {

// out[i] = float(in[i]) for i < n (bias widening for fp32-output problems).
Status widen_to_fp32(const void* in, DType t, int64_t n, float* out, cudaStream_t stream);

// How many of the heuristic's answers are registered as kernels: cublaslt (its first), cublaslt_h1 .. _h<count - 1>.
int heuristic_count();

// The heuristic's answers for p on the current device when asked for `want` of them, each as the algorithm's 64 opaque
// bytes. A table names an algorithm by its place in this list (cublaslt_h<i>), so the GPU tests check that the place
// does not depend on how many are asked for.
Status heuristic_algos(const Problem& p, int want, std::vector<std::array<uint64_t, 8>>* out);

// The tuner's cuBLASLt candidates beyond the heuristic's answers (lt_algo.h), where cuBLASLt accepts them for p on the
// current device, nearest first: each answer with the cluster shapes of kLtSearchClusters; at SearchDepth::wide also
// the first kLtWideAnswers unsplit answers with every custom option and those clusters. Empty without a GPU.
std::vector<std::string> search_names(const Problem& p, SearchDepth depth);

}  // namespace tgemm::cublaslt_detail
