// The result of one kernel launch, taken from the launch call's own return value (cudaLaunchKernelEx and friends
// return this launch's error). Not cudaGetLastError after a successful launch: that slot may hold an earlier call's
// error, the caller's, which would then be reported as this kernel's failure and taken from the caller. After a failed
// launch the slot holds this launch's error; it is cleared once the failure is returned as a Status, so that a later
// check (the next kernel's, the caller's) does not see it again. Seen in session 40: a skinny launch that asked for too
// many registers left cudaErrorLaunchOutOfResources behind, and the next, healthy, skinny launch reported it.
#pragma once

#include <cuda_runtime_api.h>
#ifdef __CUDACC__
#include <cuda_runtime.h>

#include <utility>
#endif

namespace tgemm {

inline cudaError_t launch_result(cudaError_t e) {
  if (e != cudaSuccess) (void)cudaGetLastError();
  return e;
}

#ifdef __CUDACC__
// A launch of `grid` blocks of `block` threads, no dynamic shared memory, with launch_result's error: what the
// triple-chevron launches of the helper kernels become (a <<<>>> launch has no return value, only the shared slot).
template <class... P, class... A>
cudaError_t launch_plain(void (*kernel)(P...), unsigned grid, unsigned block, cudaStream_t stream, A&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(block);
  cfg.stream = stream;
  return launch_result(cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...));
}
#endif

}  // namespace tgemm
