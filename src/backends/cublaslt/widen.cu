#include <string>

#include "backends/cublaslt/cublaslt.h"
#include "core/cuda_status.h"
#include "core/dtype.cuh"
#include "core/launch_error.h"

namespace tgemm::cublaslt_detail {

namespace {
template <class T>
__global__ void widen_kernel(const T* __restrict__ in, int64_t n, float* __restrict__ out) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = to_float(in[i]);
}
}  // namespace

Status widen_to_fp32(const void* in, DType t, int64_t n, float* out, cudaStream_t stream) {
  unsigned blocks = unsigned(std::min<int64_t>((n + 255) / 256, 1024));
  cudaError_t e = cudaSuccess;
  visit_dtype(t, [&]<class T>() { e = launch_plain(widen_kernel<T>, blocks, 256, stream, static_cast<const T*>(in), n, out); });
  return cuda_status(e, "bias widen launch");
}

}  // namespace tgemm::cublaslt_detail
