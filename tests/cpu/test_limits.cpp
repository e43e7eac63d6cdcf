// check_limits at its exact boundaries: one below, at, one above.
#include <gtest/gtest.h>

#include "seed_problem.h"
#include "tgemm/kernel.h"

namespace tgemm {
namespace {

Problem seed(int64_t m) { return testing::seed_problem(m); }

Limits i32_tma() {
  Limits l;
  l.y_index_bits = 32;
  l.uses_tma = true;
  l.ld_multiple = 8;
  l.ptr_align = 16;
  return l;
}

TEST(Limits, Int32YOffsetBoundary) {
  Limits l = i32_tma();
  // Largest M with (M-1)*6144 + 6143 <= 2^31-1 is 2^31/6144 = 349525.33 -> 349525.
  EXPECT_TRUE(check_limits(l, seed(349525)).ok());
  Verdict v = check_limits(l, seed(349526));
  EXPECT_EQ(v.kind, Verdict::Kind::addressing);
  EXPECT_NE(v.reason.find("2147487743"), std::string::npos) << v.reason;  // (349526-1)*6144+6143
  EXPECT_NE(v.reason.find("int32 Y"), std::string::npos) << v.reason;
  EXPECT_EQ(check_limits(l, seed(768000)).kind, Verdict::Kind::addressing);
}

TEST(Limits, Int32OffsetExactlyAtMax) {
  Limits l;
  l.y_index_bits = 32;
  Problem p = seed(1);
  p.n = 1, p.ldy = 1;
  p.m = 2147483648;  // offsets 0 .. 2^31-1: the last one is exactly INT32_MAX
  EXPECT_TRUE(check_limits(l, p).ok());
  p.m = 2147483649;
  EXPECT_EQ(check_limits(l, p).kind, Verdict::Kind::addressing);
}

TEST(Limits, Int64KernelOnlyLimitedByTma) {
  Limits l = i32_tma();
  l.y_index_bits = 64;
  EXPECT_TRUE(check_limits(l, seed(768000)).ok());
  Problem p = seed(2147483647);
  EXPECT_TRUE(check_limits(l, p).ok());
  p.m = 2147483648;  // TMA coordinates are int32
  Verdict v = check_limits(l, p);
  EXPECT_EQ(v.kind, Verdict::Kind::addressing);
  EXPECT_NE(v.reason.find("TMA"), std::string::npos);
}

TEST(Limits, TmaStrideLimit) {
  Limits l = i32_tma();
  l.y_index_bits = 64;
  Problem p = seed(16);
  p.ldy = (int64_t(1) << 39) - 8;  // bf16: stride just under 2^40 bytes
  EXPECT_TRUE(check_limits(l, p).ok());
  p.ldy = int64_t(1) << 39;  // exactly 2^40 bytes
  EXPECT_EQ(check_limits(l, p).kind, Verdict::Kind::unsupported);
}

TEST(Limits, LeadingDimensionMultiple) {
  Limits l = i32_tma();
  Problem p = seed(64);
  p.ldx = 1288;
  EXPECT_TRUE(check_limits(l, p).ok());
  p.ldx = 1281;
  Verdict v = check_limits(l, p);
  EXPECT_EQ(v.kind, Verdict::Kind::unsupported);
  EXPECT_NE(v.reason.find("ldx = 1281 is not a multiple of 8"), std::string::npos) << v.reason;
}

TEST(Limits, AlignmentDtypeAndBias) {
  Limits l = i32_tma();
  Problem p = seed(64);
  p.align_y = 8;
  EXPECT_NE(check_limits(l, p).reason.find("y pointer aligned to 8 bytes < 16"), std::string::npos);
  p = seed(64);
  p.in_dtype = DType::fp32;
  EXPECT_EQ(check_limits(l, p).kind, Verdict::Kind::unsupported);
  p = seed(64);
  l.bias_fp32 = false;
  p.bias_dtype = DType::fp32;
  EXPECT_NE(check_limits(l, p).reason.find("bias dtype fp32"), std::string::npos);
}

TEST(Limits, MaxMAndGrid) {
  Limits l;
  l.max_m = 64;
  Problem p = seed(64);
  EXPECT_TRUE(check_limits(l, p).ok());
  p.m = 65;
  EXPECT_EQ(check_limits(l, p).kind, Verdict::Kind::addressing);
  Limits g;
  g.tile_m = 128;
  g.max_m_tiles = 65535;
  p.m = 128 * 65535;
  EXPECT_TRUE(check_limits(g, p).ok());
  p.m += 1;
  EXPECT_EQ(check_limits(g, p).kind, Verdict::Kind::addressing);
}

TEST(Limits, XAndWOffsets) {
  Limits l;
  l.w_index_bits = 32;
  Problem p = seed(1);
  p.k = 65536, p.ldw = 65536, p.ldx = 65536;
  p.n = 32768;  // (N-1)*65536 + 65535 = 2^31 - 1
  EXPECT_TRUE(check_limits(l, p).ok());
  p.n = 32769;
  Verdict v = check_limits(l, p);
  EXPECT_EQ(v.kind, Verdict::Kind::addressing);
  EXPECT_NE(v.reason.find("W offset"), std::string::npos) << v.reason;
}

}  // namespace
}  // namespace tgemm
