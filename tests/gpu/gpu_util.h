// Helpers for GPU tests: guarded operands for one problem, host fp64 reference.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "bench/operands.h"
#include "common/untabled_dispatcher.h"
#include "tgemm/tgemm.h"

namespace tgemm::testing {

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr
#define TGEMM_OK(expr)                          \
  do {                                          \
    ::tgemm::Status _s = (expr);                \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s.to_string(); \
  } while (0)

using Case = bench::GuardedCase;
using Guarded = bench::GuardedProblem;
using bench::make_guarded;

// A registered kernel, by name, and a problem to run it on.
struct KernelCase {
  const char* kernel;
  Case c;
};

inline std::vector<double> to_host(const void* d, DType t, int64_t count) {
  std::vector<double> out(size_t(std::max<int64_t>(count, 0)));
  if (count <= 0) return out;
  size_t es = size_t(dtype_size(t));
  std::vector<unsigned char> raw(size_t(count) * es);
  cudaMemcpy(raw.data(), d, raw.size(), cudaMemcpyDeviceToHost);
  for (int64_t i = 0; i < count; ++i) {
    const unsigned char* p = raw.data() + size_t(i) * es;
    if (t == DType::fp32) out[size_t(i)] = *reinterpret_cast<const float*>(p);
    else if (t == DType::bf16) out[size_t(i)] = double(__bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(p)));
    else out[size_t(i)] = double(__half2float(*reinterpret_cast<const __half*>(p)));
  }
  return out;
}

inline int64_t span_of(const MatrixView& v) { return v.rows == 0 ? 0 : (v.rows - 1) * v.ld + v.cols; }
inline size_t span_bytes(const MatrixView& v) { return size_t(span_of(v)) * size_t(dtype_size(v.dtype)); }

// The bytes of v's span, copied once `stream`'s work before the call is done (so comparing two runs' outputs
// compares bits).
inline std::vector<unsigned char> host_bytes(const MatrixView& v, cudaStream_t stream = nullptr) {
  std::vector<unsigned char> h(span_bytes(v));
  cudaMemcpyAsync(h.data(), v.data, h.size(), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  return h;
}

// Checks y against an fp64 host reference: every element written, max error within the output rounding
// plus fp32-accumulation error.
inline void expect_matches_fp64(const Guarded& g, const std::string& what) {
  const Case& c = g.c;
  auto x = to_host(g.xv.data, c.in, span_of(g.xv));
  auto w = to_host(g.wv.data, c.in, span_of(g.wv));
  auto b = to_host(g.bv.data, g.bv.dtype, c.n);
  auto y = to_host(g.yv.data, c.out, span_of(g.yv));
  double err2 = 0, ref2 = 0, max_err = 0;
  int64_t nan = 0, bad = 0;
  // bf16 output rounding is 2^-8 relative; accumulate tolerance accordingly.
  double rel = c.out == DType::bf16 ? 1.0 / 128 : c.out == DType::fp16 ? 1.0 / 1024 : 1e-5;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double acc = c.bias ? b[size_t(j)] : 0.0;
      for (int64_t k = 0; k < c.k; ++k) acc += x[size_t(i * g.xv.ld + k)] * w[size_t(j * g.wv.ld + k)];
      double v = y[size_t(i * g.yv.ld + j)];
      if (std::isnan(v)) {
        ++nan;
        continue;
      }
      double e = std::fabs(v - acc);
      err2 += e * e, ref2 += acc * acc, max_err = std::max(max_err, e);
      if (e > rel * std::fabs(acc) + 1e-3 * std::sqrt(double(c.k) + 1)) ++bad;
    }
  EXPECT_EQ(nan, 0) << what << " " << c.str() << ": unwritten (NaN) elements";
  EXPECT_EQ(bad, 0) << what << " " << c.str() << ": elements outside tolerance, max abs err " << max_err;
  double r = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  EXPECT_LT(r, c.out == DType::fp32 ? 1e-5 : 1e-2) << what << " " << c.str();
}

inline void expect_guards_intact(const Guarded& g, const std::string& what) {
  for (const bench::Guarded* b : {&g.x, &g.w, &g.b, &g.y}) {
    int64_t before = -1, after = -1;
    Status s = b->check_guards(&before, &after, nullptr);
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_EQ(before, 0) << what << " " << g.c.str() << ": bytes changed before an operand";
    EXPECT_EQ(after, 0) << what << " " << g.c.str() << ": bytes changed after an operand";
  }
}

// Bytes of the padding columns [cols, ld) between v's rows that no longer hold poison's 0xFF: a kernel must not write
// there (a strided Y may be a view into a wider tensor whose other columns belong to someone else).
inline int64_t pad_bytes_changed(const MatrixView& v) {
  if (!bench::has_row_padding(v)) return 0;
  const std::vector<unsigned char> h = host_bytes(v);
  const size_t es = size_t(dtype_size(v.dtype));
  int64_t changed = 0;
  for (int64_t r = 0; r + 1 < v.rows; ++r)
    for (size_t b = size_t(r * v.ld + v.cols) * es; b < size_t((r + 1) * v.ld) * es; ++b) changed += h[b] != 0xFF;
  return changed;
}

// Runs k on g through d with Y poisoned and checks it against the reference: every output written and close, relative
// L2 error below 1e-2, Y's padding columns and the guards intact; with `rerun` and a deterministic kernel, a second run
// on a poisoned Y gives the same bytes. The caller checks HasFailure() to stop early.
inline void expect_kernel_matches(Dispatcher& d, const Kernel& k, const Guarded& g, bool rerun) {
  const Case& c = g.c;
  TGEMM_OK(bench::poison(g.yv, nullptr));
  TGEMM_OK(d.run_kernel(k, g.xv, g.wv, g.bias(), g.yv, nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  bench::Compare cmp;
  TGEMM_OK(bench::compare(g.args(), bench::default_tol(c.out), &cmp, nullptr));
  EXPECT_EQ(cmp.unwritten, 0) << k.name() << " " << c.str() << ": " << cmp.to_string();
  EXPECT_EQ(cmp.not_close, 0) << k.name() << " " << c.str() << ": " << cmp.to_string();
  EXPECT_LT(cmp.rel_l2(), 1e-2) << k.name() << " " << c.str() << ": " << cmp.to_string();
  EXPECT_EQ(pad_bytes_changed(g.yv), 0) << k.name() << " " << c.str() << ": wrote into Y's padding columns";
  expect_guards_intact(g, k.name());
  if (rerun && k.deterministic()) {
    const auto first = host_bytes(g.yv);
    TGEMM_OK(bench::poison(g.yv, nullptr));
    TGEMM_OK(d.run_kernel(k, g.xv, g.wv, g.bias(), g.yv, nullptr));
    CUDA_OK(cudaDeviceSynchronize());
    EXPECT_TRUE(first == host_bytes(g.yv)) << k.name() << " " << c.str() << ": rerun is not bit-identical";
  }
}

}  // namespace tgemm::testing
