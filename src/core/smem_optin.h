// The shared-memory opt-in of a kernel function (cudaFuncAttributeMaxDynamicSharedMemorySize), once per device.
// It is a property of the function on a device, and a driver call on every launch is host time that plain
// launches pay (the TMA skinny kernel made one per launch until session 5).
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>

namespace tgemm {

class SmemOptIn {
 public:
  // Opts `fn` in to `bytes` of dynamic shared memory on the current device unless that was done before for this
  // device (devices 0-63 are remembered; others opt in on every call). `bytes` must be the same on every call.
  cudaError_t ensure(const void* fn, int bytes) const {
    int dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess) {
      (void)cudaGetLastError();
      dev = -1;
    }
    const uint64_t bit = dev >= 0 && dev < 64 ? uint64_t(1) << dev : 0;
    if (bit && (done_.load(std::memory_order_acquire) & bit)) return cudaSuccess;
    const cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e == cudaSuccess) done_.fetch_or(bit, std::memory_order_acq_rel);
    return e;
  }

 private:
  mutable std::atomic<uint64_t> done_{0};  // bit d: done on device d
};

}  // namespace tgemm
