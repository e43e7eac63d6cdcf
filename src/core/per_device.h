// Facts the backends compute once per device and keep: the SM count, and per kernel function its shared-memory
// opt-in and occupancy answers. Each is a driver call that plain launches would otherwise pay on every call.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <mutex>

namespace tgemm {

// Device ordinals remembered; a launch on a device beyond them is refused by the callers.
inline constexpr int kMaxDevices = 64;

// One T per device ordinal, filled by the first caller's `compute(T&)`; every later caller gets the same T.
// `dev` must be in [0, kMaxDevices).
template <class T>
class PerDevice {
 public:
  template <class F>
  const T& get(int dev, F&& compute) {
    const size_t d = size_t(dev);
    std::call_once(once_[d], [&] { compute(val_[d]); });
    return val_[d];
  }

 private:
  std::array<std::once_flag, kMaxDevices> once_;
  std::array<T, kMaxDevices> val_{};
};

// SM count of the current device; 132 (H100/H200 SXM) when it cannot be read, leaving no error behind for a later
// launch check to find.
inline int current_sm_count() {
  static PerDevice<int> sms;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) {
    (void)cudaGetLastError();
    return 132;
  }
  return sms.get(dev, [&](int& v) {
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || v <= 0) {
      (void)cudaGetLastError();
      v = 132;
    }
  });
}

}  // namespace tgemm
