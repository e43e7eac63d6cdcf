// Argument validation: every rejected input gets a Status that names the argument.
#include <cstdint>
#include <string>

#include "tgemm/tgemm.h"

namespace tgemm {

namespace {

using i128 = __int128;

Status bad(std::string msg) { return {StatusCode::invalid_argument, std::move(msg)}; }

int pointer_alignment(const void* p) {
  auto v = reinterpret_cast<uintptr_t>(p);
  int a = 16;
  while (a > 1 && (v % uintptr_t(a)) != 0) a /= 2;
  return a;
}

// Byte span [begin, end) a matrix view touches; validates the view's own fields.
Status check_matrix(const char* name, const MatrixView& v, bool input_dtype_only, uintptr_t* begin, uintptr_t* end) {
  std::string n = name;
  if (v.rows < 0) return bad(n + ".rows = " + std::to_string(v.rows) + " is negative");
  if (v.cols < 0) return bad(n + ".cols = " + std::to_string(v.cols) + " is negative");
  if (v.dtype != DType::bf16 && v.dtype != DType::fp16 && v.dtype != DType::fp32)
    return bad(n + ".dtype = " + std::to_string(int(v.dtype)) + " is not a dtype");
  if (input_dtype_only && v.dtype == DType::fp32)
    return bad(n + ".dtype = fp32 not supported (X and W must be bf16 or fp16)");
  if (v.ld < v.cols || v.ld < 1)
    return bad(n + ".ld = " + std::to_string(v.ld) + " < " + n + ".cols = " + std::to_string(v.cols) +
               " (leading dimension must be >= the row length and >= 1)");
  *begin = *end = reinterpret_cast<uintptr_t>(v.data);
  if (v.rows == 0 || v.cols == 0) return Status::Ok();
  if (v.data == nullptr) return bad(n + ": null data pointer for a " + std::to_string(v.rows) + "x" + std::to_string(v.cols) + " matrix");
  int64_t es = dtype_size(v.dtype);
  if (reinterpret_cast<uintptr_t>(v.data) % uintptr_t(es) != 0)
    return bad(n + ": data pointer is not aligned to its element size (" + std::to_string(es) + " bytes)");
  i128 span = (i128(v.rows - 1) * v.ld + v.cols) * es;
  if (span > i128(INT64_MAX) || i128(reinterpret_cast<uintptr_t>(v.data)) + span > i128(UINTPTR_MAX))
    return bad(n + ": rows*ld*elem_size overflows the address space (rows = " + std::to_string(v.rows) +
               ", ld = " + std::to_string(v.ld) + ")");
  *end = *begin + uintptr_t(span);
  return Status::Ok();
}

bool overlaps(uintptr_t a0, uintptr_t a1, uintptr_t b0, uintptr_t b1) { return a0 < b1 && b0 < a1; }

}  // namespace

Status make_problem(const MatrixView& x, const MatrixView& w, const VectorView* bias, const MatrixView& y,
                    Problem* out) {
  uintptr_t x0, x1, w0, w1, y0, y1;
  if (Status s = check_matrix("x", x, true, &x0, &x1); !s.ok()) return s;
  if (Status s = check_matrix("w", w, true, &w0, &w1); !s.ok()) return s;
  if (Status s = check_matrix("y", y, false, &y0, &y1); !s.ok()) return s;
  if (w.dtype != x.dtype)
    return bad("w.dtype = " + std::string(dtype_name(w.dtype)) + " differs from x.dtype = " + std::string(dtype_name(x.dtype)));
  if (x.cols != w.cols)
    return bad("x.cols = " + std::to_string(x.cols) + " (K) differs from w.cols = " + std::to_string(w.cols));
  if (y.rows != x.rows)
    return bad("y.rows = " + std::to_string(y.rows) + " differs from x.rows = " + std::to_string(x.rows) + " (M)");
  if (y.cols != w.rows)
    return bad("y.cols = " + std::to_string(y.cols) + " differs from w.rows = " + std::to_string(w.rows) + " (N)");
  Problem p;
  p.m = x.rows;
  p.n = w.rows;
  p.k = x.cols;
  p.in_dtype = x.dtype;
  p.out_dtype = y.dtype;
  p.ldx = x.ld;
  p.ldw = w.ld;
  p.ldy = y.ld;
  p.align_x = pointer_alignment(x.data);
  p.align_w = pointer_alignment(w.data);
  p.align_y = pointer_alignment(y.data);
  if (bias != nullptr) {
    if (bias->dtype != x.dtype && bias->dtype != DType::fp32)
      return bad("bias.dtype = " + std::string(dtype_name(bias->dtype)) + " must be the input dtype (" +
                 std::string(dtype_name(x.dtype)) + ") or fp32");
    if (bias->size != p.n)
      return bad("bias.size = " + std::to_string(bias->size) + " differs from w.rows = " + std::to_string(p.n) + " (N)");
    if (p.n > 0 && bias->data == nullptr) return bad("bias: null data pointer");
    if (reinterpret_cast<uintptr_t>(bias->data) % uintptr_t(dtype_size(bias->dtype)) != 0)
      return bad("bias: data pointer is not aligned to its element size (" + std::to_string(dtype_size(bias->dtype)) + " bytes)");
    p.has_bias = true;
    p.bias_dtype = bias->dtype;
    p.align_bias = pointer_alignment(bias->data);
    uintptr_t b0 = reinterpret_cast<uintptr_t>(bias->data), b1 = b0 + uintptr_t(p.n * dtype_size(bias->dtype));
    if (p.m > 0 && p.n > 0 && overlaps(y0, y1, b0, b1)) return bad("y overlaps bias: the output must not alias an input");
  }
  if (p.m > 0 && p.n > 0) {
    if (p.k > 0 && overlaps(y0, y1, x0, x1)) return bad("y overlaps x: the output must not alias an input");
    if (p.k > 0 && overlaps(y0, y1, w0, w1)) return bad("y overlaps w: the output must not alias an input");
  }
  *out = p;
  return Status::Ok();
}

}  // namespace tgemm
