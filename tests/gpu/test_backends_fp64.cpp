// cuBLASLt and the reference kernel against an fp64 host reference.
#include "gpu_util.h"
#include "registry/registry.h"

namespace tgemm::testing {
namespace {

std::vector<Case> small_cases() {
  std::vector<Case> cs;
  for (DType in : {DType::bf16, DType::fp16})
    for (DType out : {DType::bf16, DType::fp16, DType::fp32})
      for (int bias : {0, 1, 2}) {
        cs.push_back({37, 53, 71, in, out, bias, 0, 0, 0});
        cs.push_back({128, 96, 64, in, out, bias, 8, 16, 24});  // leading dimensions larger than the row
      }
  cs.push_back({1, 1, 1});
  cs.push_back({3, 5, 1283, DType::bf16, DType::bf16, 1, 5, 3, 1});
  cs.push_back({257, 129, 33, DType::fp16, DType::fp32, 2, 1, 1, 7});
  return cs;
}

class Fp64 : public ::testing::TestWithParam<std::string> {};

TEST_P(Fp64, MatchesHostReference) {
  const Kernel* k = find_kernel(GetParam());
  ASSERT_NE(k, nullptr);
  auto d = std::unique_ptr<Dispatcher>();
  TGEMM_OK(untabled_dispatcher(&d));
  uint64_t seed = 100;
  for (const Case& c : small_cases()) {
    Guarded g;
    TGEMM_OK(make_guarded(c, seed += 10, &g));
    if (Verdict v = k->can_implement(g.args().p); !v.ok()) {
      std::printf("%s does not take %s: %s\n", k->name().c_str(), c.str().c_str(), v.reason.c_str());
      continue;
    }
    TGEMM_OK(d->run_kernel(*k, g.xv, g.wv, g.bias(), g.yv, nullptr));
    CUDA_OK(cudaDeviceSynchronize());
    expect_matches_fp64(g, k->name());
    expect_guards_intact(g, k->name());
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Fp64, ::testing::Values("cublaslt", "reference_simt_64x64_i64"));

TEST(Dispatch, MmMatchesHostReferenceOnOddShapes) {
  uint64_t seed = 900;
  for (const Case& c : small_cases()) {
    Guarded g;
    TGEMM_OK(make_guarded(c, seed += 10, &g));
    TGEMM_OK(mm(g.xv, g.wv, g.bias(), g.yv));
    CUDA_OK(cudaDeviceSynchronize());
    expect_matches_fp64(g, "mm");
    expect_guards_intact(g, "mm");
  }
}

}  // namespace
}  // namespace tgemm::testing
