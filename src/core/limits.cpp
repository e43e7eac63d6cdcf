// The one place that decides whether a problem fits a kernel's declared Limits.
#include <cctype>
#include <string>

#include "tgemm/kernel.h"

namespace tgemm {

namespace {

using i128 = __int128;
constexpr int64_t kInt32Max = 2147483647;       // 2^31 - 1: the largest int32 offset
constexpr int64_t kTmaMaxCoord = 2147483647;    // TMA coordinates are int32
constexpr i128 kTmaMaxStrideBytes = i128(1) << 40;

std::string str(i128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  std::string s;
  while (v != 0) {
    int d = int(v % 10);
    s.insert(s.begin(), char('0' + (d < 0 ? -d : d)));
    v /= 10;
  }
  return neg ? "-" + s : s;
}

Verdict fail(Verdict::Kind kind, std::string reason) { return {kind, std::move(reason)}; }

std::string dtype_set(uint8_t bits) {
  std::string s;
  for (DType t : {DType::bf16, DType::fp16, DType::fp32})
    if (bits & dtype_bit(t)) s += (s.empty() ? "" : ", ") + std::string(dtype_name(t));
  return s;
}

// Largest element offset a kernel forms into a [rows, cols] operand with leading dimension ld.
i128 max_offset(int64_t rows, int64_t cols, int64_t ld) {
  if (rows <= 0 || cols <= 0) return 0;
  return i128(rows - 1) * ld + (cols - 1);
}

}  // namespace

double Problem::min_bytes() const {
  double in = double(dtype_size(in_dtype));
  double b = double(m) * double(k) * in + double(n) * double(k) * in + double(m) * double(n) * double(dtype_size(out_dtype));
  if (has_bias) b += double(n) * double(dtype_size(bias_dtype));
  return b;
}

bool operator==(const Problem& a, const Problem& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.in_dtype == b.in_dtype && a.out_dtype == b.out_dtype &&
         a.has_bias == b.has_bias && a.bias_dtype == b.bias_dtype && a.ldx == b.ldx && a.ldw == b.ldw && a.ldy == b.ldy &&
         a.align_x == b.align_x && a.align_w == b.align_w && a.align_y == b.align_y && a.align_bias == b.align_bias;
}

Verdict check_limits(const Limits& lim, const Problem& p) {
  using K = Verdict::Kind;
  // What no piece of the problem could fix.
  if (!(lim.in_dtypes & dtype_bit(p.in_dtype)))
    return fail(K::unsupported, "input dtype " + std::string(dtype_name(p.in_dtype)) + " not supported (" +
                                    dtype_set(lim.in_dtypes) + ")");
  if (!(lim.out_dtypes & dtype_bit(p.out_dtype)))
    return fail(K::unsupported, "output dtype " + std::string(dtype_name(p.out_dtype)) + " not supported (" +
                                    dtype_set(lim.out_dtypes) + ")");
  if (p.has_bias) {
    bool same = p.bias_dtype == p.in_dtype, f32 = p.bias_dtype == DType::fp32;
    if (!((same && lim.bias_same_as_input) || (f32 && lim.bias_fp32)))
      return fail(K::unsupported, "bias dtype " + std::string(dtype_name(p.bias_dtype)) + " not supported");
    if (p.align_bias < lim.bias_align)
      return fail(K::unsupported, "bias pointer aligned to " + std::to_string(p.align_bias) + " bytes < " +
                                      std::to_string(lim.bias_align) + " required");
  }
  if (p.k == 0 && !lim.k_zero) return fail(K::unsupported, "K = 0 not supported");
  if (p.k > lim.max_k)
    return fail(K::unsupported, "K = " + std::to_string(p.k) + " > " + std::to_string(lim.max_k) + " (max K)");
  if (p.k % lim.k_multiple != 0)
    return fail(K::unsupported, "K = " + std::to_string(p.k) + " is not a multiple of " + std::to_string(lim.k_multiple) +
                                    " elements");
  if (p.m < lim.min_m)
    return fail(K::unsupported, "M = " + std::to_string(p.m) + " < " + std::to_string(lim.min_m) + " (min M)");
  struct Ld { const char* name; int64_t ld; };
  for (Ld l : {Ld{"ldx", p.ldx}, Ld{"ldw", p.ldw}, Ld{"ldy", p.ldy}})
    if (l.ld % lim.ld_multiple != 0)
      return fail(K::unsupported, std::string(l.name) + " = " + std::to_string(l.ld) + " is not a multiple of " +
                                      std::to_string(lim.ld_multiple) + " elements");
  struct Al { const char* name; int align; };
  for (Al a : {Al{"x", p.align_x}, Al{"w", p.align_w}, Al{"y", p.align_y}})
    if (a.align < lim.ptr_align)
      return fail(K::unsupported, std::string(a.name) + " pointer aligned to " + std::to_string(a.align) +
                                      " bytes < " + std::to_string(lim.ptr_align) + " required");
  if (lim.uses_tma) {
    if (p.k > kTmaMaxCoord)
      return fail(K::unsupported, "K = " + std::to_string(p.k) + " > 2^31-1 (TMA coordinates are int32)");
    struct St { const char* name; int64_t ld; DType t; };
    for (St s : {St{"ldx", p.ldx, p.in_dtype}, St{"ldw", p.ldw, p.in_dtype}, St{"ldy", p.ldy, p.out_dtype}}) {
      i128 bytes = i128(s.ld) * dtype_size(s.t);
      if (bytes % 16 != 0)
        return fail(K::unsupported, std::string(s.name) + " stride " + str(bytes) + " bytes is not a multiple of 16 (TMA)");
      if (bytes >= kTmaMaxStrideBytes)
        return fail(K::unsupported, std::string(s.name) + " stride " + str(bytes) + " bytes >= 2^40 (TMA)");
    }
  }

  // Addressing: a smaller piece of M (or N) would fit.
  if (p.m > lim.max_m)
    return fail(K::addressing, "M = " + std::to_string(p.m) + " > " + std::to_string(lim.max_m) + " (max M)");
  if (p.n > lim.max_n)
    return fail(K::addressing, "N = " + std::to_string(p.n) + " > " + std::to_string(lim.max_n) + " (max N)");
  if (lim.uses_tma) {
    if (p.m > kTmaMaxCoord)
      return fail(K::addressing, "M = " + std::to_string(p.m) + " > 2^31-1 (TMA coordinates are int32)");
    if (p.n > kTmaMaxCoord)
      return fail(K::addressing, "N = " + std::to_string(p.n) + " > 2^31-1 (TMA coordinates are int32)");
  }
  i128 m_tiles = (i128(p.m) + lim.tile_m - 1) / lim.tile_m, n_tiles = (i128(p.n) + lim.tile_n - 1) / lim.tile_n;
  if (m_tiles > lim.max_m_tiles)
    return fail(K::addressing, "ceil(M/" + std::to_string(lim.tile_m) + ") = " + str(m_tiles) + " M tiles > " +
                                   std::to_string(lim.max_m_tiles) + " (grid limit)");
  if (n_tiles > lim.max_n_tiles)
    return fail(K::addressing, "ceil(N/" + std::to_string(lim.tile_n) + ") = " + str(n_tiles) + " N tiles > " +
                                   std::to_string(lim.max_n_tiles) + " (grid limit)");
  struct Ix { const char* what; int bits; int64_t rows, cols, ld; const char* rows_name; const char* cols_name; };
  for (Ix ix : {Ix{"Y", lim.y_index_bits, p.m, p.n, p.ldy, "M", "N"}, Ix{"X", lim.x_index_bits, p.m, p.k, p.ldx, "M", "K"},
                Ix{"W", lim.w_index_bits, p.n, p.k, p.ldw, "N", "K"}}) {
    if (ix.bits >= 64) continue;
    i128 off = max_offset(ix.rows, ix.cols, ix.ld);
    if (off > kInt32Max)
      return fail(K::addressing, std::string(ix.what) + " offset (" + ix.rows_name + "-1)*ld" + char(std::tolower(ix.what[0])) +
                                     "+" + ix.cols_name + "-1 = " + str(off) + " > 2^31-1 (int32 " + ix.what +
                                     " offsets); " + ix.rows_name + "*" + ix.cols_name + " = " +
                                     str(i128(ix.rows) * ix.cols) + (i128(ix.rows) * ix.cols >= (i128(1) << 31) ? " >= 2^31" : " < 2^31"));
  }
  return Verdict::Ok();
}

}  // namespace tgemm
