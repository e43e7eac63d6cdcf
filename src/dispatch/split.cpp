#include "dispatch/split.h"

#include <algorithm>

namespace tgemm {

namespace {

int offset_alignment(int base, __int128 byte_offset) {
  int a = base;
  while (a > 1 && byte_offset % a != 0) a /= 2;
  return a;
}

// Largest v in [1, hi] with fits(v) true, assuming fits is monotone (true up to some bound); 0 if none.
template <class F>
int64_t largest_fitting(int64_t hi, F fits) {
  if (hi < 1 || !fits(1)) return 0;
  int64_t lo = 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// A split into more pieces than this is refused, and the next candidate takes the problem: only sizes far beyond
// any GPU's memory need that many, and the piece list alone could exhaust the host's.
constexpr int64_t kMaxPieces = int64_t(1) << 16;

// How many pieces of at most max_piece cover total (both >= 1); no overflow near INT64_MAX.
int64_t piece_count(int64_t total, int64_t max_piece) { return (total - 1) / max_piece + 1; }

// `count` pieces covering `total`, of equal size rounded up to `quantum` when that keeps them <= max_piece.
std::vector<std::pair<int64_t, int64_t>> even_pieces(int64_t total, int64_t max_piece, int64_t quantum) {
  int64_t count = piece_count(total, max_piece);
  int64_t size = (total - 1) / count + 1;
  __int128 rounded = (__int128(size) + quantum - 1) / quantum * quantum;
  if (rounded <= max_piece) size = int64_t(rounded);
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t start = 0; start < total;) {
    int64_t len = std::min(size, total - start);
    out.push_back({start, len});
    start += len;
  }
  return out;
}

}  // namespace

Problem piece_problem(const Problem& p, int64_t m0, int64_t m, int64_t n0, int64_t n) {
  Problem q = p;
  q.m = m;
  q.n = n;
  __int128 in = dtype_size(p.in_dtype);
  q.align_x = offset_alignment(p.align_x, __int128(m0) * p.ldx * in);
  q.align_w = offset_alignment(p.align_w, __int128(n0) * p.ldw * in);
  q.align_y = offset_alignment(p.align_y, (__int128(m0) * p.ldy + n0) * dtype_size(p.out_dtype));
  if (p.has_bias) q.align_bias = offset_alignment(p.align_bias, __int128(n0) * dtype_size(p.bias_dtype));
  return q;
}

GemmArgs piece_args(const GemmArgs& a, const Piece& pc) {
  GemmArgs r = a;
  r.p = piece_problem(a.p, pc.m0, pc.m, pc.n0, pc.n);
  const int64_t in = dtype_size(a.p.in_dtype);
  r.x = static_cast<const char*>(a.x) + pc.m0 * a.p.ldx * in;
  r.w = static_cast<const char*>(a.w) + pc.n0 * a.p.ldw * in;
  r.y = static_cast<char*>(a.y) + (pc.m0 * a.p.ldy + pc.n0) * dtype_size(a.p.out_dtype);
  if (a.bias) r.bias = static_cast<const char*>(a.bias) + pc.n0 * dtype_size(a.p.bias_dtype);
  return r;
}

bool split_for(const Kernel& k, const Problem& p, std::vector<Piece>* pieces, std::string* why) {
  pieces->clear();
  // N first: the widest column block of which a single row fits. Column offsets keep 16-byte alignment
  // when pieces are multiples of 64 columns.
  int64_t n_max = largest_fitting(p.n, [&](int64_t n) { return k.can_implement(piece_problem(p, 0, 1, 0, n)).ok(); });
  if (n_max == 0) {
    *why = "not even a 1x1 piece fits: " + k.can_implement(piece_problem(p, 0, 1, 0, 1)).reason;
    return false;
  }
  if (n_max < p.n && n_max >= 64) n_max = n_max / 64 * 64;
  if (piece_count(p.n, n_max) > kMaxPieces) {
    *why = "N = " + std::to_string(p.n) + " needs more than " + std::to_string(kMaxPieces) + " column pieces of <= " + std::to_string(n_max);
    return false;
  }
  auto n_pieces = even_pieces(p.n, n_max, 64);
  int64_t n_block = n_pieces.front().second;
  int64_t m_max = largest_fitting(p.m, [&](int64_t m) { return k.can_implement(piece_problem(p, 0, m, 0, n_block)).ok(); });
  if (m_max == 0) {
    *why = "no row block fits " + std::to_string(n_block) + " columns";
    return false;
  }
  if (__int128(piece_count(p.m, m_max)) * __int128(n_pieces.size()) > kMaxPieces) {
    *why = "M = " + std::to_string(p.m) + " x N = " + std::to_string(p.n) + " needs more than " + std::to_string(kMaxPieces) +
           " pieces of <= " + std::to_string(m_max) + " rows x " + std::to_string(n_block) + " cols";
    return false;
  }
  // Row pieces in multiples of 256 so each piece fills whole tiles of any config.
  auto m_pieces = even_pieces(p.m, m_max, 256);
  for (auto [n0, n] : n_pieces)
    for (auto [m0, m] : m_pieces) {
      Verdict v = k.can_implement(piece_problem(p, m0, m, n0, n));
      if (!v.ok()) {
        *why = "piece rows [" + std::to_string(m0) + ", " + std::to_string(m0 + m) + ") cols [" + std::to_string(n0) +
               ", " + std::to_string(n0 + n) + "): " + v.reason;
        pieces->clear();
        return false;
      }
      pieces->push_back({m0, m, n0, n});
    }
  return true;
}

}  // namespace tgemm
