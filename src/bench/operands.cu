#include "bench/operands.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "backends/reference/reference.h"
#include "core/cuda_status.h"
#include "core/dtype.cuh"
#include "core/launch_error.h"

namespace tgemm::bench {

namespace {

__device__ __forceinline__ uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
__global__ void random_kernel(T* p, int64_t n, uint64_t seed, float scale) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float u = float(splitmix(seed ^ uint64_t(i) * 0xD1B54A32D192ED03ull) >> 40) * (1.0f / 16777216.0f);  // [0,1)
    p[i] = from_float<T>((2.f * u - 1.f) * scale);
  }
}

__global__ void count_not_byte(const uint8_t* p, int64_t n, uint8_t want, unsigned long long* count) {
  unsigned long long local = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    local += p[i] != want;
  if (local) atomicAdd(count, local);
}

struct CompareAcc {
  unsigned long long checked, unwritten, not_close;
  double err_sq, ref_sq;
  unsigned long long max_abs_bits, max_rel_bits;  // non-negative doubles order like their bits
};

template <class Out>
__global__ void compare_kernel(const Out* __restrict__ y, int64_t ldy, const float* __restrict__ ref, int64_t rows,
                               int64_t n, double tol, CompareAcc* acc) {
  unsigned long long unwritten = 0, not_close = 0, checked = 0;
  double err_sq = 0, ref_sq = 0, max_abs = 0, max_rel = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = i / n, c = i % n;
    float v = to_float(y[r * ldy + c]);
    float want = ref[i];
    ++checked;
    if (isnan(v)) {
      ++unwritten;
      continue;
    }
    double d = double(v) - double(want);
    err_sq += d * d;
    ref_sq += double(want) * double(want);
    max_abs = fmax(max_abs, fabs(d));
    max_rel = fmax(max_rel, fabs(d) / (tol + fabs(double(want))));
    if (fabs(d) > tol + tol * fabs(double(want))) ++not_close;
  }
  atomicAdd(&acc->checked, checked);
  atomicAdd(&acc->unwritten, unwritten);
  atomicAdd(&acc->not_close, not_close);
  atomicAdd(&acc->err_sq, err_sq);
  atomicAdd(&acc->ref_sq, ref_sq);
  atomicMax(&acc->max_abs_bits, (unsigned long long)__double_as_longlong(max_abs));
  atomicMax(&acc->max_rel_bits, (unsigned long long)__double_as_longlong(max_rel));
}

// One block per row chunk; a row counts once however many NaNs it holds.
template <class T>
__global__ void nan_rows_kernel(const T* __restrict__ y, int64_t m, int64_t n, int64_t ldy, unsigned long long* count) {
  for (int64_t r = blockIdx.x; r < m; r += gridDim.x) {
    int any = 0;
    for (int64_t c = threadIdx.x; c < n; c += blockDim.x) any |= isnan(to_float(y[r * ldy + c]));
    if (__syncthreads_or(any) && threadIdx.x == 0) atomicAdd(count, 1ull);
  }
}

int64_t span_elems(const MatrixView& v) { return v.rows == 0 || v.cols == 0 ? 0 : (v.rows - 1) * v.ld + v.cols; }

}  // namespace

Guarded::~Guarded() {
  if (raw_) cudaFree(raw_);
}

Guarded& Guarded::operator=(Guarded&& o) noexcept {
  if (this != &o) {
    if (raw_) cudaFree(raw_);
    raw_ = o.raw_, base_ = o.base_, before_ = o.before_, bytes_ = o.bytes_, after_ = o.after_;
    o.raw_ = o.base_ = nullptr;
  }
  return *this;
}

Status Guarded::make(size_t bytes, size_t guard_before, size_t guard_after, Guarded* out, size_t offset) {
  Guarded g;
  size_t total = guard_before + offset + bytes + guard_after;
  if (Status s = cuda_status(cudaMalloc(&g.raw_, std::max<size_t>(total, 1)), "cudaMalloc guarded"); !s.ok()) return s;
  g.base_ = g.raw_;
  g.before_ = guard_before + offset;
  g.bytes_ = bytes;
  g.after_ = guard_after;
  if (Status s = cuda_status(cudaMemset(g.raw_, kGuardByte, total), "cudaMemset guard"); !s.ok()) return s;
  *out = std::move(g);
  return Status::Ok();
}

Status Guarded::reset_guards(cudaStream_t stream) {
  cudaMemsetAsync(base_, kGuardByte, before_, stream);
  cudaMemsetAsync(base_ + before_ + bytes_, kGuardByte, after_, stream);
  return cuda_status(cudaStreamSynchronize(stream), "reset guards");
}

Status Guarded::check_guards(int64_t* changed_before, int64_t* changed_after, cudaStream_t stream) const {
  unsigned long long* d = nullptr;
  if (Status s = cuda_status(cudaMallocAsync(&d, 2 * sizeof *d, stream), "cudaMallocAsync"); !s.ok()) return s;
  cudaMemsetAsync(d, 0, 2 * sizeof *d, stream);
  cudaError_t le = cudaSuccess;
  if (before_) le = launch_plain(count_not_byte, 1024, 256, stream, reinterpret_cast<const uint8_t*>(base_), int64_t(before_), kGuardByte, d);
  if (after_ && le == cudaSuccess)
    le = launch_plain(count_not_byte, 1024, 256, stream, reinterpret_cast<const uint8_t*>(base_ + before_ + bytes_), int64_t(after_), kGuardByte,
                      d + 1);
  unsigned long long h[2];
  cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, stream);
  cudaFreeAsync(d, stream);
  if (Status s = cuda_status(cudaStreamSynchronize(stream), "guard check"); !s.ok()) return s;
  if (Status s = cuda_status(le, "guard check launch"); !s.ok()) return s;
  *changed_before = int64_t(h[0]);
  *changed_after = int64_t(h[1]);
  return Status::Ok();
}

Status fill_random(void* p, DType t, int64_t count, uint64_t seed, cudaStream_t stream, float scale) {
  if (count <= 0) return Status::Ok();
  unsigned blocks = unsigned(std::min<int64_t>((count + 255) / 256, 8192));
  cudaError_t le = cudaSuccess;
  visit_dtype(t, [&]<class T>() { le = launch_plain(random_kernel<T>, blocks, 256, stream, static_cast<T*>(p), count, seed, scale); });
  return cuda_status(le, "fill_random launch");
}

std::string GuardedCase::str() const {
  return "M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) + " " + std::string(dtype_name(in)) + "->" +
         std::string(dtype_name(out)) + " bias=" + std::to_string(bias) + " pads=" + std::to_string(pad_x) + "/" + std::to_string(pad_w) +
         "/" + std::to_string(pad_y);
}

GemmArgs GuardedProblem::args() const {
  GemmArgs a;
  (void)make_problem(xv, wv, bias(), yv, &a.p);
  a.x = xv.data, a.w = wv.data, a.bias = c.bias ? bv.data : nullptr, a.y = yv.data;
  return a;
}

Status GuardedProblem::guard_bytes(int64_t* changed, cudaStream_t stream) const {
  *changed = 0;
  for (const Guarded* g : {&x, &w, &b, &y}) {
    int64_t before = 0, after = 0;
    if (Status st = g->check_guards(&before, &after, stream); !st.ok()) return st;
    *changed += before + after;
  }
  return Status::Ok();
}

Status make_guarded(const GuardedCase& c, uint64_t seed, GuardedProblem* g, size_t guard, size_t y_guard_before, cudaStream_t stream) {
  g->c = c;
  const int64_t ldx = c.k + c.pad_x, ldw = c.k + c.pad_w, ldy = c.n + c.pad_y;
  auto span = [](int64_t r, int64_t cols, int64_t ld, DType t) { return size_t(r == 0 ? 0 : (r - 1) * ld + cols) * size_t(dtype_size(t)); };
  const DType bt = c.bias == 2 ? DType::fp32 : c.in;
  if (Status s = Guarded::make(span(c.m, c.k, ldx, c.in), guard, guard, &g->x); !s.ok()) return s;
  if (Status s = Guarded::make(span(c.n, c.k, ldw, c.in), guard, guard, &g->w); !s.ok()) return s;
  if (Status s = Guarded::make(size_t(c.n) * size_t(dtype_size(bt)), guard, guard, &g->b); !s.ok()) return s;
  if (Status s = Guarded::make(span(c.m, c.n, ldy, c.out), y_guard_before ? y_guard_before : guard, guard, &g->y); !s.ok()) return s;
  g->xv = {g->x.data(), c.m, c.k, std::max<int64_t>(ldx, 1), c.in};
  g->wv = {g->w.data(), c.n, c.k, std::max<int64_t>(ldw, 1), c.in};
  g->yv = {g->y.data(), c.m, c.n, std::max<int64_t>(ldy, 1), c.out};
  g->bv = {g->b.data(), c.n, bt};
  // Scaled so sums over K stay O(1): a bf16 output's rounding, or a vendor algorithm that reduces split-K partials
  // in the output dtype (seen: cuBLASLt at odd leading dimensions), stays far inside isclose's 5e-2, while an
  // addressing error does not.
  const float scale = std::min(1.0f, 8.0f / std::sqrt(float(std::max<int64_t>(c.k, 1))));
  if (Status s = fill_random(g->xv, seed, stream, scale); !s.ok()) return s;
  if (Status s = fill_random(g->wv, seed + 1, stream, scale); !s.ok()) return s;
  if (Status s = fill_random(g->b.data(), bt, c.n, seed + 2, stream); !s.ok()) return s;
  // X's and W's padding columns [K, ld) hold 0x5A5A (bf16 ~1.5e16, fp16 203), so a kernel that lets them into a sum
  // is far off, not within tolerance: padding may be another tensor's data.
  if (Status s = fill_padding(g->xv, 0x5A, stream); !s.ok()) return s;
  if (Status s = fill_padding(g->wv, 0x5A, stream); !s.ok()) return s;
  if (Status s = poison(g->yv, stream); !s.ok()) return s;
  return cuda_status(cudaStreamSynchronize(stream), "make_guarded");
}

Status fill_random(const MatrixView& v, uint64_t seed, cudaStream_t stream, float scale) {
  return fill_random(v.data, v.dtype, span_elems(v), seed, stream, scale);
}

Status fill_padding(const MatrixView& v, unsigned char byte, cudaStream_t stream) {
  if (!has_row_padding(v)) return Status::Ok();
  const size_t es = size_t(dtype_size(v.dtype));
  return cuda_status(cudaMemset2DAsync(static_cast<char*>(v.data) + size_t(v.cols) * es, size_t(v.ld) * es, byte,
                                       size_t(v.ld - v.cols) * es, size_t(v.rows - 1), stream),
                     "fill_padding");
}

Status poison(const MatrixView& v, cudaStream_t stream) {
  int64_t n = span_elems(v);
  if (n == 0) return Status::Ok();
  return cuda_status(cudaMemsetAsync(v.data, 0xFF, size_t(n * dtype_size(v.dtype)), stream), "poison");
}

Status count_nan_rows(const MatrixView& y, int64_t* rows, cudaStream_t stream) {
  *rows = 0;
  if (y.rows == 0 || y.cols == 0) return Status::Ok();
  unsigned long long* d = nullptr;
  if (Status s = cuda_status(cudaMallocAsync(&d, sizeof *d, stream), "cudaMallocAsync"); !s.ok()) return s;
  cudaMemsetAsync(d, 0, sizeof *d, stream);
  unsigned blocks = unsigned(std::min<int64_t>(y.rows, 65536));
  cudaError_t le = cudaSuccess;
  visit_dtype(y.dtype, [&]<class T>() {
    le = launch_plain(nan_rows_kernel<T>, blocks, 256, stream, static_cast<const T*>(y.data), y.rows, y.cols, y.ld, d);
  });
  unsigned long long h = 0;
  cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, stream);
  cudaFreeAsync(d, stream);
  if (Status s = cuda_status(cudaStreamSynchronize(stream), "count_nan_rows"); !s.ok()) return s;
  if (Status s = cuda_status(le, "count_nan_rows launch"); !s.ok()) return s;
  *rows = int64_t(h);
  return Status::Ok();
}

double Compare::rel_l2() const { return ref_sq > 0 ? std::sqrt(err_sq / ref_sq) : std::sqrt(err_sq); }

void Compare::add(const Compare& o) {
  checked += o.checked;
  unwritten += o.unwritten;
  not_close += o.not_close;
  err_sq += o.err_sq;
  ref_sq += o.ref_sq;
  max_abs = std::max(max_abs, o.max_abs);
  max_rel = std::max(max_rel, o.max_rel);
}

std::string Compare::to_string() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "rel_l2=%.3e max_abs=%.3e max_rel=%.3e unwritten/NaN=%lld not_close=%lld of %lld", rel_l2(), max_abs, max_rel,
                (long long)unwritten, (long long)not_close, (long long)checked);
  return buf;
}

double default_tol(DType) { return 5e-2; }

namespace {

// Compares rows [row0, row0 + rows) of a.y with `ref` (rows x N fp32, dense).
Status compare_with(const GemmArgs& a, int64_t row0, int64_t rows, const float* ref, double tol, Compare* out, cudaStream_t stream) {
  const Problem& p = a.p;
  CompareAcc* acc = nullptr;
  if (Status s = cuda_status(cudaMallocAsync(&acc, sizeof(CompareAcc), stream), "cudaMallocAsync acc"); !s.ok()) return s;
  cudaMemsetAsync(acc, 0, sizeof(CompareAcc), stream);
  unsigned blocks = unsigned(std::min<int64_t>((rows * p.n + 255) / 256, 4096));
  cudaError_t le = cudaSuccess;
  visit_dtype(p.out_dtype, [&]<class Out>() {
    le = launch_plain(compare_kernel<Out>, blocks, 256, stream, static_cast<const Out*>(a.y) + row0 * p.ldy, p.ldy, ref, rows, p.n, tol, acc);
  });
  Status s = cuda_status(le, "compare launch");
  CompareAcc h{};
  cudaMemcpyAsync(&h, acc, sizeof h, cudaMemcpyDeviceToHost, stream);
  cudaFreeAsync(acc, stream);
  if (Status e = cuda_status(cudaStreamSynchronize(stream), "compare"); !e.ok()) return e;
  if (!s.ok()) return s;
  Compare c;
  c.checked = int64_t(h.checked);
  c.unwritten = int64_t(h.unwritten);
  c.not_close = int64_t(h.not_close);
  c.err_sq = h.err_sq;
  c.ref_sq = h.ref_sq;
  std::memcpy(&c.max_abs, &h.max_abs_bits, sizeof c.max_abs);
  std::memcpy(&c.max_rel, &h.max_rel_bits, sizeof c.max_rel);
  out->add(c);
  return Status::Ok();
}

// The row blocks compare() checks when M*N is past max_full_elements: ascending, disjoint, (first row, rows).
std::vector<std::pair<int64_t, int64_t>> sampled_blocks(const Problem& p, int64_t boundary) {
  std::vector<std::pair<int64_t, int64_t>> blocks;
  const int64_t b = 128;
  blocks.push_back({0, b});
  blocks.push_back({p.m - b, b});
  for (int i = 1; i < 8; ++i) blocks.push_back({p.m * i / 8, b});
  if (boundary > 0)
    for (int64_t e = boundary; e < p.m; e += boundary) blocks.push_back({e - b / 2, b});
  // Rows whose int32 offset would wrap: the first rows past 2^31 / ldy.
  int64_t wrap = (int64_t(1) << 31) / std::max<int64_t>(p.ldy, 1);
  if (wrap < p.m) blocks.push_back({wrap - b / 2, b});
  std::sort(blocks.begin(), blocks.end());
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t done = 0;  // rows below this are taken already
  for (auto [r0, n] : blocks) {
    r0 = std::clamp<int64_t>(r0, 0, p.m);
    int64_t r1 = std::min(p.m, r0 + n);
    r0 = std::max(r0, done);
    if (r1 <= r0) continue;
    out.push_back({r0, r1 - r0});
    done = r1;
  }
  return out;
}

// All rows in chunks that keep an fp32 copy of one below ~1 GiB, or the sampled blocks.
std::vector<std::pair<int64_t, int64_t>> compare_blocks(const Problem& p, int64_t max_full_elements, int64_t boundary) {
  if (p.m * p.n > max_full_elements) return sampled_blocks(p, boundary);
  std::vector<std::pair<int64_t, int64_t>> out;
  const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 28) / std::max<int64_t>(p.n, 1));
  for (int64_t r = 0; r < p.m; r += chunk) out.push_back({r, std::min(chunk, p.m - r)});
  return out;
}

}  // namespace

Status compare_rows(const GemmArgs& a, int64_t row0, int64_t rows, double tol, Compare* out, cudaStream_t stream) {
  const Problem& p = a.p;
  if (rows <= 0 || p.n == 0) return Status::Ok();
  float* ref = nullptr;
  if (Status s = cuda_status(cudaMallocAsync(&ref, size_t(rows * p.n) * sizeof(float), stream), "cudaMallocAsync ref"); !s.ok()) return s;
  Status s = reference::gemm_fp32(a, row0, rows, ref, stream);
  if (s.ok()) s = compare_with(a, row0, rows, ref, tol, out, stream);
  // compare_with synchronised the stream; the free is stream-ordered and needs no second wait.
  if (Status e = cuda_status(cudaFreeAsync(ref, stream), "cudaFreeAsync ref"); !e.ok() && s.ok()) return e;
  return s;
}

Status compare(const GemmArgs& a, double tol, Compare* out, cudaStream_t stream, int64_t max_full_elements, int64_t boundary) {
  for (auto [r0, rows] : compare_blocks(a.p, max_full_elements, boundary))
    if (Status s = compare_rows(a, r0, rows, tol, out, stream); !s.ok()) return s;
  return Status::Ok();
}

Status ReferenceRows::make(const GemmArgs& a, int64_t max_full_elements, int64_t boundary, cudaStream_t stream, ReferenceRows* out) {
  ReferenceRows r;
  const Problem& p = a.p;
  r.blocks_ = compare_blocks(p, max_full_elements, boundary);
  int64_t rows = 0;
  for (auto [r0, n] : r.blocks_) rows += n;
  if (rows * p.n > 0) {
    if (Status s = Guarded::make(size_t(rows * p.n) * sizeof(float), 0, 0, &r.ref_); !s.ok()) return s;
    float* at = static_cast<float*>(r.ref_.data());
    for (auto [r0, n] : r.blocks_) {
      if (Status s = reference::gemm_fp32(a, r0, n, at, stream); !s.ok()) return s;
      at += n * p.n;
    }
    if (Status s = cuda_status(cudaStreamSynchronize(stream), "reference rows"); !s.ok()) return s;
  }
  *out = std::move(r);
  return Status::Ok();
}

Status ReferenceRows::compare(const GemmArgs& a, double tol, Compare* out, cudaStream_t stream) const {
  const float* at = static_cast<const float*>(ref_.data());
  for (auto [r0, n] : blocks_) {
    if (Status s = compare_with(a, r0, n, at, tol, out, stream); !s.ok()) return s;
    at += n * a.p.n;
  }
  return Status::Ok();
}

}  // namespace tgemm::bench
