// The arrival counters of a split across CTAs, for the kernels that split K through their workspace (the persistent
// skinny kernel, the sm90 `_skauto` kernels).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tgemm/kernel.h"

namespace tgemm {

// `n` counters that are zero when the launch starts: the stream's zeroed counters when they hold n (the kernel
// leaves them zero), else the first n words of `workspace` after a memset on `stream` (the workspace is shared with
// the stream's other kernels, so nothing left there can be trusted; a graph replays the memset too). The caller keeps
// its first n * 4 bytes of workspace for them either way.
inline cudaError_t split_counters(const ZeroedCounters& zeroed, void* workspace, int64_t n, cudaStream_t stream,
                                  uint32_t** out) {
  if (zeroed.holds(n)) {
    *out = zeroed.ptr;
    return cudaSuccess;
  }
  *out = static_cast<uint32_t*>(workspace);
  return cudaMemsetAsync(workspace, 0, size_t(n) * 4, stream);
}

}  // namespace tgemm
