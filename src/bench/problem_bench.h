// One shape's operands on the device, and launches of mm / a kernel on them, for the one benchmark routine.
#pragma once

#include <memory>
#include <vector>

#include "bench/operands.h"
#include "bench/timing.h"
#include "table/table.h"
#include "tgemm/tgemm.h"

namespace tgemm::bench {

class DeviceMem {
 public:
  DeviceMem() = default;
  ~DeviceMem();
  DeviceMem(DeviceMem&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; }
  DeviceMem& operator=(DeviceMem&& o) noexcept;
  static Status make(size_t bytes, DeviceMem* out);
  void* get() const { return p_; }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

// How many operand sets a shape of `per_set` input bytes rotates through on a GPU with `l2_bytes` of L2.
int rotations_for(size_t per_set, size_t l2_bytes);

// Operand sets for a shape: X, W, bias rotated through enough sets that together they exceed the L2 (so a
// memory-bound kernel reads cold data); one Y.
struct Operands {
  Shape shape;
  int rotations = 1;
  std::vector<DeviceMem> x, w, bias;
  DeviceMem y;

  static Status make(const Shape& s, uint64_t seed, cudaStream_t stream, Operands* out, size_t l2_bytes = 0);
  MatrixView xv(int r) const;
  MatrixView wv(int r) const;
  MatrixView yv() const;
  VectorView bv(int r) const;
  GemmArgs args(int r) const;  // with the problem filled in
};

Launch launch_mm(Dispatcher& d, const Operands& o);
Launch launch_kernel(Dispatcher& d, const Kernel& k, const Operands& o);
// Runs `plan` (e.g. a forced kernel split into pieces); the plan must outlive the launch.
Launch launch_plan(Dispatcher& d, const Plan& plan, const Operands& o);

// Poisons Y, runs `launch` once on rotation 0, compares against the reference (sampled for huge shapes).
Status check_result(const Launch& launch, const Operands& o, Compare* out, cudaStream_t stream);

}  // namespace tgemm::bench
