// cuBLASLt's heuristic as the tuned table relies on it: cublaslt_h<i> is the heuristic's answer i, asked for
// heuristic_count() answers. The table stays valid only if answer i does not depend on how many are asked for, and
// the baseline (cublaslt, answer 0) is what a caller asking for one answer gets.
#include <algorithm>
#include <set>

#include "gpu_util.h"
#include "backends/cublaslt/cublaslt.h"
#include "registry/registry.h"

namespace tgemm::testing {
namespace {

TEST(CublasLtHeuristic, AnswersDoNotDependOnHowManyAreAskedFor) {
  const int count = cublaslt_detail::heuristic_count();
  // Decode, mid-band and large shapes of the suites, with and without bias, bf16 and fp16, and fp32 output.
  struct S {
    int64_t m, n, k;
    bool bias;
    DType in, out;
  };
  const S shapes[] = {{1, 4096, 4096, false, DType::bf16, DType::bf16},      {16, 28672, 4096, false, DType::bf16, DType::bf16},
                      {128, 4608, 3584, true, DType::bf16, DType::bf16},     {256, 7168, 8192, false, DType::bf16, DType::bf16},
                      {1024, 1280, 5120, true, DType::bf16, DType::bf16},    {4096, 4096, 4096, false, DType::bf16, DType::bf16},
                      {16384, 1024, 4096, true, DType::bf16, DType::bf16},   {340000, 6144, 1280, true, DType::bf16, DType::bf16},
                      {512, 8192, 1024, false, DType::fp16, DType::fp16},    {2048, 3584, 18944, false, DType::bf16, DType::fp32}};
  for (const S& s : shapes) {
    Problem p;
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.in_dtype = s.in;
    p.out_dtype = s.out;
    p.has_bias = s.bias;
    p.bias_dtype = s.out;
    p.ldx = p.ldw = s.k;
    p.ldy = s.n;
    // Asked for one, a few, the registered count, and more than that (the names past the count are not registered,
    // so answers there are only reported).
    std::vector<std::array<uint64_t, 8>> one, few, all, more;
    TGEMM_OK(cublaslt_detail::heuristic_algos(p, 1, &one));
    TGEMM_OK(cublaslt_detail::heuristic_algos(p, 3, &few));
    TGEMM_OK(cublaslt_detail::heuristic_algos(p, count, &all));
    TGEMM_OK(cublaslt_detail::heuristic_algos(p, 4 * count, &more));
    std::printf("cuBLASLt heuristic M=%lld N=%lld K=%lld bias=%d: %zu answers of %d asked, %zu of %d\n", (long long)s.m,
                (long long)s.n, (long long)s.k, int(s.bias), all.size(), count, more.size(), 4 * count);
    ASSERT_EQ(one.size(), 1u);
    ASSERT_FALSE(all.empty());
    EXPECT_EQ(one[0], all[0]) << "the first answer depends on how many are asked for";
    EXPECT_EQ(few.size(), std::min<size_t>(3, all.size()));
    EXPECT_EQ(all.size(), std::min<size_t>(size_t(count), more.size()));
    for (size_t i = 0; i < all.size(); ++i) {
      if (i < few.size()) EXPECT_EQ(few[i], all[i]) << "answer " << i << " of M=" << s.m << " N=" << s.n << " K=" << s.k;
      EXPECT_EQ(more[i], all[i]) << "answer " << i << " of M=" << s.m << " N=" << s.n << " K=" << s.k;
    }
    // Distinct answers: two names for one algorithm would waste the tuner's time and hide nothing else.
    for (size_t i = 0; i < all.size(); ++i)
      for (size_t j = i + 1; j < all.size(); ++j) EXPECT_NE(all[i], all[j]) << "answers " << i << " and " << j;
  }
}

// The tuner's configured algorithms (Registry::search: each heuristic answer with other cluster shapes, and at `wide`
// the first answers with other custom options) against the reference: fresh random data, poisoned output, guard bytes,
// reruns bit-identical where the kernel says it is deterministic; bf16 and fp16, fp32 output, bias or not, odd M.
TEST(CublasLtSearch, ConfiguredAlgorithmsMatchReference) {
  std::unique_ptr<Dispatcher> d;
  TGEMM_OK(untabled_dispatcher(&d));
  uint64_t seed = 7300;
  int ran = 0;
  const std::vector<Backend> lt = {Backend::cublaslt};
  for (const Case& c : {Case{256, 4096, 4096, DType::bf16, DType::bf16, 0}, Case{129, 4608, 3584, DType::bf16, DType::bf16, 1},
                        Case{1024, 1280, 5120, DType::fp16, DType::fp16, 1}, Case{333, 2048, 1032, DType::bf16, DType::fp32, 2}}) {
    Guarded g;
    TGEMM_OK(make_guarded(c, seed += 13, &g));
    const Problem& p = g.args().p;
    const std::vector<const Kernel*> near = Registry::get().search(p, SearchDepth::near, lt);
    const std::vector<const Kernel*> wide = Registry::get().search(p, SearchDepth::wide, lt);
    EXPECT_FALSE(near.empty()) << c.str() << ": no configured algorithm";
    EXPECT_GT(wide.size(), near.size()) << c.str() << ": the wide search adds nothing";
    // Nearest first: a tune at `wide` tries everything a tune at `near` does, in the same order, and nothing twice.
    ASSERT_GE(wide.size(), near.size());
    EXPECT_TRUE(std::equal(near.begin(), near.end(), wide.begin())) << c.str();
    std::set<const Kernel*> distinct(wide.begin(), wide.end());
    EXPECT_EQ(distinct.size(), wide.size()) << c.str();
    EXPECT_TRUE(Registry::get().search(p, SearchDepth::none, lt).empty());
    EXPECT_TRUE(Registry::get().search(p, SearchDepth::wide, {Backend::sm90, Backend::skinny}).empty()) << "only the backends asked";
    std::printf("cuBLASLt search %s: %zu configured algorithms near, %zu wide\n", c.str().c_str(), near.size(), wide.size());
    for (const Kernel* k : wide) {
      const Verdict v = k->can_implement(p);
      ASSERT_TRUE(v.ok()) << k->name() << " " << c.str() << ": " << v.reason;
      expect_kernel_matches(*d, *k, g, true);
      ++ran;
      if (::testing::Test::HasFailure()) return;
    }
  }
  std::printf("cuBLASLt search: %d configured (algorithm, shape) runs checked\n", ran);
}

// A configured algorithm cuBLASLt does not accept for a problem is refused there with cuBLASLt's reason, and the
// dispatcher never runs it: an algorithm id that does not exist, and a tile id past every tile.
TEST(CublasLtSearch, UnacceptedConfigurationsAreRefused) {
  Problem p;
  p.m = 256;
  p.n = p.k = p.ldx = p.ldw = p.ldy = 4096;
  for (const char* name : {"cublaslt_a99999_t18_s35_k1_r0_w0_c3_i0_cl2", "cublaslt_a66_t99999_s35_k1_r0_w0_c3_i0_cl2"}) {
    const Kernel* k = Registry::get().find(name);
    ASSERT_NE(k, nullptr) << name;
    const Verdict v = k->can_implement(p);
    EXPECT_FALSE(v.ok()) << name;
    EXPECT_NE(v.reason.find(name), std::string::npos) << v.reason;
    std::printf("%s: %s\n", name, v.reason.c_str());
  }
}

}  // namespace
}  // namespace tgemm::testing
