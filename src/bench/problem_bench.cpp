#include "bench/problem_bench.h"

#include <algorithm>
#include <string>

#include "core/cuda_status.h"

namespace tgemm::bench {

DeviceMem::~DeviceMem() {
  if (p_) cudaFree(p_);
}

DeviceMem& DeviceMem::operator=(DeviceMem&& o) noexcept {
  if (this != &o) {
    if (p_) cudaFree(p_);
    p_ = o.p_, bytes_ = o.bytes_;
    o.p_ = nullptr;
  }
  return *this;
}

Status DeviceMem::make(size_t bytes, DeviceMem* out) {
  DeviceMem m;
  if (cudaError_t e = cudaMalloc(&m.p_, std::max<size_t>(bytes, 16)); e != cudaSuccess)
    return cuda_status(e, "cudaMalloc(" + std::to_string(bytes) + ")");
  m.bytes_ = bytes;
  *out = std::move(m);
  return Status::Ok();
}

int rotations_for(size_t per_set, size_t l2_bytes) {
  per_set = std::max<size_t>(per_set, 1);
  // One set plus enough others to exceed 3x the L2: the timing routine gives consecutive launches consecutive
  // sets, so a set comes back only after 3x the L2 of other data. Even a set larger than the L2 gets a second
  // one: reading the same W again, a kernel would find the tail it read last still in L2, how much of it
  // depending on its access order.
  const size_t want = 1 + (3 * l2_bytes + per_set - 1) / per_set;
  // At most 64 sets and ~8 GB of inputs (a set alone may exceed that: the seed's X is 2 GB).
  const size_t cap = std::max<size_t>(1, std::min<size_t>(64, (size_t(8) << 30) / per_set));
  return int(std::clamp<size_t>(want, 1, cap));
}

Status Operands::make(const Shape& s, uint64_t seed, cudaStream_t stream, Operands* out, size_t l2_bytes) {
  Operands o;
  o.shape = s;
  const size_t in = size_t(dtype_size(s.dtype));
  const size_t xb = size_t(s.m) * s.k * in, wb = size_t(s.n) * s.k * in, bb = s.bias ? size_t(s.n) * in : 0;
  if (l2_bytes == 0) {
    int dev = 0, l2 = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
    l2_bytes = size_t(std::max(l2, 1));
  }
  o.rotations = rotations_for(xb + wb + bb, l2_bytes);
  for (int r = 0; r < o.rotations; ++r) {
    DeviceMem x, w, b;
    if (Status st = DeviceMem::make(xb, &x); !st.ok()) return st;
    if (Status st = DeviceMem::make(wb, &w); !st.ok()) return st;
    if (s.bias)
      if (Status st = DeviceMem::make(bb, &b); !st.ok()) return st;
    o.x.push_back(std::move(x));
    o.w.push_back(std::move(w));
    o.bias.push_back(std::move(b));
    if (Status st = fill_random(o.xv(r), seed + 3 * r, stream); !st.ok()) return st;
    if (Status st = fill_random(o.wv(r), seed + 3 * r + 1, stream); !st.ok()) return st;
    if (s.bias)
      if (Status st = fill_random(o.bias[r].get(), s.dtype, s.n, seed + 3 * r + 2, stream); !st.ok()) return st;
  }
  if (Status st = DeviceMem::make(size_t(s.m) * s.n * size_t(dtype_size(s.outdtype)), &o.y); !st.ok()) return st;
  if (Status st = poison(o.yv(), stream); !st.ok()) return st;
  *out = std::move(o);
  return Status::Ok();
}

MatrixView Operands::xv(int r) const { return {x[size_t(r)].get(), shape.m, shape.k, shape.k, shape.dtype}; }
MatrixView Operands::wv(int r) const { return {w[size_t(r)].get(), shape.n, shape.k, shape.k, shape.dtype}; }
MatrixView Operands::yv() const { return {y.get(), shape.m, shape.n, shape.n, shape.outdtype}; }
VectorView Operands::bv(int r) const { return {bias[size_t(r)].get(), shape.n, shape.dtype}; }

GemmArgs Operands::args(int r) const {
  GemmArgs a;
  VectorView b = bv(r);
  (void)make_problem(xv(r), wv(r), shape.bias ? &b : nullptr, yv(), &a.p);
  a.x = x[size_t(r)].get();
  a.w = w[size_t(r)].get();
  a.bias = shape.bias ? bias[size_t(r)].get() : nullptr;
  a.y = y.get();
  return a;
}

Launch launch_mm(Dispatcher& d, const Operands& o) {
  return [&d, &o](int r, cudaStream_t s) {
    VectorView b = o.bv(r);
    return d.mm(o.xv(r), o.wv(r), o.shape.bias ? &b : nullptr, o.yv(), s);
  };
}

Launch launch_kernel(Dispatcher& d, const Kernel& k, const Operands& o) {
  return [&d, &k, &o](int r, cudaStream_t s) {
    VectorView b = o.bv(r);
    return d.run_kernel(k, o.xv(r), o.wv(r), o.shape.bias ? &b : nullptr, o.yv(), s);
  };
}

Launch launch_plan(Dispatcher& d, const Plan& plan, const Operands& o) {
  return [&d, &plan, &o](int r, cudaStream_t s) {
    VectorView b = o.bv(r);
    return d.run_plan(plan, o.xv(r), o.wv(r), o.shape.bias ? &b : nullptr, o.yv(), s);
  };
}

Status check_result(const Launch& launch, const Operands& o, Compare* out, cudaStream_t stream) {
  if (Status s = poison(o.yv(), stream); !s.ok()) return s;
  if (Status s = launch(0, stream); !s.ok()) return s;
  if (Status s = cuda_status(cudaStreamSynchronize(stream), "run"); !s.ok()) return s;
  *out = Compare{};
  return compare(o.args(0), default_tol(o.shape.outdtype), out, stream);
}

}  // namespace tgemm::bench
