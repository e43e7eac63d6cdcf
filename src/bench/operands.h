// Device operands for tests, benchmarks, the tuner and the safety sweep: random fill, poisoned outputs,
// guard regions, comparison against the reference kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tgemm/tgemm.h"

namespace tgemm::bench {

// cudaMalloc'd bytes with guard regions before and after, filled with kGuardByte.
class Guarded {
 public:
  static constexpr uint8_t kGuardByte = 0xA5;
  Guarded() = default;
  ~Guarded();
  Guarded(Guarded&& o) noexcept { *this = std::move(o); }
  Guarded& operator=(Guarded&& o) noexcept;
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;

  // `align` keeps the payload at this byte alignment; `offset` adds bytes to misalign it on purpose.
  static Status make(size_t bytes, size_t guard_before, size_t guard_after, Guarded* out, size_t offset = 0);
  void* data() const { return base_ ? base_ + before_ : nullptr; }
  size_t bytes() const { return bytes_; }
  // Refills the guard regions (after a run that wrote into them on purpose).
  Status reset_guards(cudaStream_t stream);
  // Counts guard bytes that changed.
  Status check_guards(int64_t* changed_before, int64_t* changed_after, cudaStream_t stream) const;

 private:
  char* raw_ = nullptr;
  char* base_ = nullptr;
  size_t before_ = 0, bytes_ = 0, after_ = 0;
};

// One problem, for tests and the safety sweep: sizes, dtypes, bias kind, leading-dimension padding.
struct GuardedCase {
  int64_t m = 0, n = 0, k = 0;
  DType in = DType::bf16, out = DType::bf16;
  int bias = 0;                             // 0 none, 1 input dtype, 2 fp32
  int64_t pad_x = 0, pad_w = 0, pad_y = 0;  // leading dimension = row + pad
  std::string str() const;
};

// A problem's operands, each in a guarded allocation; inputs random (scaled so sums over K stay O(1)), Y poisoned.
struct GuardedProblem {
  GuardedCase c;
  Guarded x, w, b, y;
  MatrixView xv, wv, yv;
  VectorView bv;
  const VectorView* bias() const { return c.bias ? &bv : nullptr; }
  GemmArgs args() const;
  // Guard bytes changed around all four operands.
  Status guard_bytes(int64_t* changed, cudaStream_t stream) const;
};

// `y_guard_before` (0: `guard`) is large for the repro: a wrapped int32 offset lands up to 2^31 elements before Y.
// Synchronises `stream` before returning.
Status make_guarded(const GuardedCase& c, uint64_t seed, GuardedProblem* g, size_t guard = 4096, size_t y_guard_before = 0,
                    cudaStream_t stream = nullptr);

// Uniform values in [-1, 1) from (seed, index): fresh random data for each seed. Fills the whole span
// ((rows-1)*ld + cols elements).
Status fill_random(const MatrixView& v, uint64_t seed, cudaStream_t stream, float scale = 1.0f);
Status fill_random(void* p, DType t, int64_t count, uint64_t seed, cudaStream_t stream, float scale = 1.0f);
// NaN in every element of the span (all bits set): an element left unwritten stays NaN.
Status poison(const MatrixView& v, cudaStream_t stream);
// Whether v's span holds padding columns [cols, ld) between its rows (the last row's lie past the span). A view
// without columns has none: make_guarded clamps its ld to 1 over an allocation that holds nothing.
inline bool has_row_padding(const MatrixView& v) { return v.ld > v.cols && v.rows >= 2 && v.cols > 0; }
// `byte` in every byte of the padding columns [cols, ld) between v's rows.
Status fill_padding(const MatrixView& v, unsigned char byte, cudaStream_t stream);

struct Compare {
  int64_t checked = 0;     // elements compared
  int64_t unwritten = 0;   // NaN (still poisoned, or computed NaN)
  int64_t not_close = 0;   // fail isclose(y, ref, rtol, atol)
  double err_sq = 0, ref_sq = 0, max_abs = 0;
  double max_rel = 0;      // max |y - ref| / (tol + |ref|): isclose fails where this exceeds 1
  double rel_l2() const;   // ||y - ref|| / ||ref||
  double err_ratio() const { return checked ? double(not_close + unwritten) / double(checked) : 0; }
  void add(const Compare& o);
  std::string to_string() const;
};

// Compares rows [row0, row0 + rows) of y with the reference kernel's fp32 result; isclose uses
// rtol = atol = `tol`. Allocates a scratch buffer for the reference rows.
Status compare_rows(const GemmArgs& a, int64_t row0, int64_t rows, double tol, Compare* out, cudaStream_t stream);
// All rows for moderate sizes, otherwise sampled blocks: the first and last rows, rows around every
// multiple of `boundary` (piece edges), and a few in between.
Status compare(const GemmArgs& a, double tol, Compare* out, cudaStream_t stream, int64_t max_full_elements = int64_t(1) << 28,
               int64_t boundary = 0);

// The reference's fp32 result for the rows compare() checks, computed once and compared with many outputs of one
// problem: the tuner checks dozens to over a hundred candidates per shape on the same operands, so the reference kernel
// runs once per shape, not once per candidate. (Runs 261-262: the timing rounds, not the reference, cost most of a
// candidate's ~50-70 ms.) Holds rows x N floats (all rows up to max_full_elements).
class ReferenceRows {
 public:
  // Synchronises `stream` before returning.
  static Status make(const GemmArgs& a, int64_t max_full_elements, int64_t boundary, cudaStream_t stream, ReferenceRows* out);
  // a.y (same problem and inputs as made with) against the stored rows, as compare() would check it.
  Status compare(const GemmArgs& a, double tol, Compare* out, cudaStream_t stream) const;

 private:
  std::vector<std::pair<int64_t, int64_t>> blocks_;  // (first row, rows), ascending
  Guarded ref_;                                      // the blocks' rows x N fp32, in order
};

// Rows of y (the whole matrix) holding at least one NaN: rows a kernel never wrote (Y is poisoned first).
Status count_nan_rows(const MatrixView& y, int64_t* rows, cudaStream_t stream);

// Default isclose tolerance for an output dtype (DESIGN.md: 5e-2 for bf16/fp16; fp32 output keeps bf16 inputs' rounding).
double default_tol(DType out);

}  // namespace tgemm::bench
