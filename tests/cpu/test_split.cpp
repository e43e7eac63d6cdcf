// Split plans: every piece within the kernel's limits, every row and column covered exactly once, fewest pieces.
#include <gtest/gtest.h>

#include <algorithm>

#include "dispatch/split.h"

namespace tgemm {
namespace {

class FakeKernel final : public Kernel {
 public:
  explicit FakeKernel(Limits l) : l_(l) {}
  const std::string& name() const override { return name_; }
  Backend backend() const override { return Backend::sm90; }
  const Limits& limits() const override { return l_; }
  Status run(const GemmArgs&, void*, size_t, cudaStream_t) const override { return Status::Ok(); }

 private:
  Limits l_;
  std::string name_ = "fake";
};

Problem seed(int64_t m) {
  Problem p;
  p.m = m, p.n = 6144, p.k = 1280, p.ldx = 1280, p.ldw = 1280, p.ldy = 6144, p.has_bias = true;
  return p;
}

void expect_cover(const Problem& p, const std::vector<Piece>& pieces, const Kernel& k) {
  // Coverage: the pieces tile [0,M) x [0,N) with no overlap.
  int64_t area = 0;
  for (const Piece& a : pieces) {
    EXPECT_TRUE(k.can_implement(piece_problem(p, a.m0, a.m, a.n0, a.n)).ok());
    EXPECT_GE(a.m0, 0);
    EXPECT_LE(a.m0 + a.m, p.m);
    EXPECT_GE(a.n0, 0);
    EXPECT_LE(a.n0 + a.n, p.n);
    area += a.m * a.n;
    for (const Piece& b : pieces) {
      if (&a == &b) continue;
      bool rows = a.m0 < b.m0 + b.m && b.m0 < a.m0 + a.m, cols = a.n0 < b.n0 + b.n && b.n0 < a.n0 + a.n;
      EXPECT_FALSE(rows && cols) << "pieces overlap";
    }
  }
  EXPECT_EQ(area, p.m * p.n);
}

TEST(Split, SeedShapeOnInt32Kernel) {
  Limits l;
  l.y_index_bits = 32;
  l.uses_tma = true;
  l.ld_multiple = 8;
  l.ptr_align = 16;
  FakeKernel k(l);
  for (int64_t m : {360000, 768000, 349526, 1000003}) {
    Problem p = seed(m);
    std::vector<Piece> pieces;
    std::string why;
    ASSERT_TRUE(split_for(k, p, &pieces, &why)) << why;
    // Fewest pieces: each holds at most 349525 rows.
    EXPECT_EQ(int64_t(pieces.size()), (m + 349525 - 1) / 349525) << "M=" << m;
    expect_cover(p, pieces, k);
  }
}

TEST(Split, AlignmentOfPiecesIsChecked) {
  Limits l;
  l.y_index_bits = 32;
  l.ptr_align = 16;
  FakeKernel k(l);
  Problem p = seed(768000);
  p.ldy = 6145;  // odd leading dimension: a piece starting at an odd row is 2-byte aligned only
  p.align_y = 16;
  std::vector<Piece> pieces;
  std::string why;
  bool ok = split_for(k, p, &pieces, &why);
  if (ok) expect_cover(p, pieces, k);
  else EXPECT_FALSE(why.empty());
}

TEST(Split, SplitsNWhenWeightsAloneTooLarge) {
  Limits l;
  l.w_index_bits = 32;
  l.y_index_bits = 32;
  FakeKernel k(l);
  Problem p;
  p.m = 100, p.k = 65536, p.ldx = 65536, p.ldw = 65536;
  p.n = 100000, p.ldy = 100000;  // W spans 6.5e9 elements
  std::vector<Piece> pieces;
  std::string why;
  ASSERT_TRUE(split_for(k, p, &pieces, &why)) << why;
  EXPECT_GT(pieces.size(), 1u);
  expect_cover(p, pieces, k);
  for (const Piece& pc : pieces) EXPECT_LE(pc.n, 32768);
}

TEST(Split, ImpossibleSplitSaysWhy) {
  Limits l;
  l.y_index_bits = 32;
  FakeKernel k(l);
  Problem p = seed(10);
  p.ldy = int64_t(1) << 32;  // even row 1 starts past 2^31 ... but a single row still fits
  std::vector<Piece> pieces;
  std::string why;
  EXPECT_TRUE(split_for(k, p, &pieces, &why)) << why;
  expect_cover(p, pieces, k);
  Limits tiny;
  tiny.in_dtypes = dtype_bit(DType::fp16);  // bf16 problem: unsupported, no piece helps
  FakeKernel u(tiny);
  EXPECT_FALSE(split_for(u, seed(10), &pieces, &why));
  EXPECT_NE(why.find("not supported"), std::string::npos) << why;
}

TEST(Split, PieceArgsUse64BitOffsets) {
  Problem p = seed(768000);
  GemmArgs a{p, reinterpret_cast<const void*>(0x100000000ull), reinterpret_cast<const void*>(0x200000000ull), nullptr,
             reinterpret_cast<void*>(0x7000000000ull)};
  GemmArgs b = piece_args(a, Piece{400000, 368000, 0, 6144});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.y), 0x7000000000ull + uintptr_t(400000) * 6144 * 2);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.x), 0x100000000ull + uintptr_t(400000) * 1280 * 2);
  EXPECT_EQ(b.p.m, 368000);
}

}  // namespace
}  // namespace tgemm
