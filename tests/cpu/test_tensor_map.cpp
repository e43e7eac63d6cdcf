// The per-thread tensor-map cache in front of cuTensorMapEncodeTiled (src/core/tensor_map.h), with a fake encoder:
// a repeated spec gets the first encode's bytes without encoding again, any changed field encodes anew, failures are
// not kept, old specs are replaced round-robin, and each host thread has its own cache.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "core/tensor_map.h"

namespace tgemm {
namespace {

thread_local int g_encodes = 0;
thread_local bool g_fail = false;

// Writes a fingerprint of the spec into the map, so a wrong hit shows as wrong bytes.
CUresult fake_encode(const TmaMatrix& m, CUtensorMap* out) {
  ++g_encodes;
  if (g_fail) return CUDA_ERROR_INVALID_VALUE;
  std::memset(out, 0, sizeof *out);
  uint64_t words[8] = {reinterpret_cast<uint64_t>(m.ptr), uint64_t(m.dtype), uint64_t(m.rows), uint64_t(m.cols),
                       uint64_t(m.ld), m.box_rows, uint64_t(m.units), m.box_units};
  std::memcpy(out, words, sizeof words);
  return CUDA_SUCCESS;
}

TmaMatrix spec(int64_t rows, uintptr_t ptr = 0x10000) {
  return {reinterpret_cast<const void*>(ptr), DType::bf16, rows, 4096, 4096, 64};
}

bool same(const CUtensorMap& a, const CUtensorMap& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(TensorMapCache, RepeatedSpecHitsWithTheSameBytes) {
  g_encodes = 0;
  CUtensorMap a{}, b{}, fresh{};
  ASSERT_EQ(detail::encode_tma_cached(spec(1001), &a, fake_encode), CUDA_SUCCESS);
  ASSERT_EQ(detail::encode_tma_cached(spec(1001), &b, fake_encode), CUDA_SUCCESS);
  EXPECT_EQ(g_encodes, 1);
  ASSERT_EQ(fake_encode(spec(1001), &fresh), CUDA_SUCCESS);
  EXPECT_TRUE(same(a, b));
  EXPECT_TRUE(same(b, fresh));
}

TEST(TensorMapCache, EveryFieldIsPartOfTheKey) {
  const TmaMatrix base = spec(1002);
  std::vector<TmaMatrix> variants(8, base);
  variants[0].ptr = reinterpret_cast<const void*>(0x20000);
  variants[1].dtype = DType::fp16;
  variants[2].rows = 1003;
  variants[3].cols = 4104;
  variants[4].ld = 4104;
  variants[5].box_rows = 32;
  variants[6].units = 64;
  variants[7].box_units = 4;
  CUtensorMap m{};
  ASSERT_EQ(detail::encode_tma_cached(base, &m, fake_encode), CUDA_SUCCESS);
  for (const TmaMatrix& v : variants) {
    g_encodes = 0;
    CUtensorMap got{}, want{};
    ASSERT_EQ(detail::encode_tma_cached(v, &got, fake_encode), CUDA_SUCCESS);
    EXPECT_EQ(g_encodes, 1) << "a spec differing in one field must be encoded, not served from the cache";
    ASSERT_EQ(fake_encode(v, &want), CUDA_SUCCESS);
    EXPECT_TRUE(same(got, want));
  }
}

TEST(TensorMapCache, FailedEncodesAreNotKept) {
  g_encodes = 0;
  CUtensorMap m{};
  g_fail = true;
  EXPECT_NE(detail::encode_tma_cached(spec(1004), &m, fake_encode), CUDA_SUCCESS);
  g_fail = false;
  EXPECT_EQ(detail::encode_tma_cached(spec(1004), &m, fake_encode), CUDA_SUCCESS);
  EXPECT_EQ(g_encodes, 2);
}

TEST(TensorMapCache, OldSpecsAreReplacedWhenTheCacheIsFull) {
  CUtensorMap m{};
  g_encodes = 0;
  for (int i = 0; i < detail::kTmaCacheSlots + 1; ++i)
    ASSERT_EQ(detail::encode_tma_cached(spec(2000 + i), &m, fake_encode), CUDA_SUCCESS);
  EXPECT_EQ(g_encodes, detail::kTmaCacheSlots + 1);
  g_encodes = 0;
  ASSERT_EQ(detail::encode_tma_cached(spec(2000 + detail::kTmaCacheSlots), &m, fake_encode), CUDA_SUCCESS);
  EXPECT_EQ(g_encodes, 0) << "the newest spec stays";
  bool evicted = false;
  for (int i = 0; i < detail::kTmaCacheSlots + 1 && !evicted; ++i) {
    g_encodes = 0;
    CUtensorMap got{}, want{};
    ASSERT_EQ(detail::encode_tma_cached(spec(2000 + i), &got, fake_encode), CUDA_SUCCESS);
    ASSERT_EQ(fake_encode(spec(2000 + i), &want), CUDA_SUCCESS);
    EXPECT_TRUE(same(got, want));
    evicted = g_encodes > 1;
  }
  EXPECT_TRUE(evicted) << "17 specs cannot all fit in 16 slots";
}

TEST(TensorMapCache, EachHostThreadHasItsOwn) {
  CUtensorMap m{};
  ASSERT_EQ(detail::encode_tma_cached(spec(3000), &m, fake_encode), CUDA_SUCCESS);
  int other_encodes = -1;
  std::thread t([&] {
    CUtensorMap n{};
    g_encodes = 0;
    EXPECT_EQ(detail::encode_tma_cached(spec(3000), &n, fake_encode), CUDA_SUCCESS);
    other_encodes = g_encodes;
  });
  t.join();
  EXPECT_EQ(other_encodes, 1);
}

}  // namespace
}  // namespace tgemm
