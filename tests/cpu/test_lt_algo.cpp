// cuBLASLt algorithms named by their configuration (backends/cublaslt/lt_algo.h): names round-trip, anything else is
// no name, the registry makes the kernel a name stands for once, and without a GPU it refuses with a reason.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "backends/cublaslt/lt_algo.h"
#include "common/problem_mnk.h"
#include "registry/registry.h"
#include "tgemm/tgemm.h"

namespace tgemm::cublaslt_detail {
namespace {

TEST(LtAlgo, NamesRoundTrip) {
  LtAlgoConfig c;
  c.id = 66;
  c.tile = 17;
  c.stages = 35;
  c.split_k = 2;
  c.reduction = 2;
  c.swizzle = 1;
  c.custom = 7;
  c.inner = 3;
  c.cluster = 5;
  EXPECT_EQ(c.name(), "cublaslt_a66_t17_s35_k2_r2_w1_c7_i3_cl5");
  auto back = parse_lt_algo_name(c.name());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, c);
  LtAlgoConfig big;
  big.id = 2147483647;
  big.tile = 2147483647u;
  big.cluster = 65535;
  ASSERT_TRUE(parse_lt_algo_name(big.name()).has_value());
  EXPECT_EQ(*parse_lt_algo_name(big.name()), big);
}

TEST(LtAlgo, OtherTextIsNoName) {
  for (const char* s : {"cublaslt", "cublaslt_h3", "cublaslt_a66", "cublaslt_a66_t17_s35_k1_r0_w0_c1_i0",
                        "cublaslt_a66_t17_s35_k1_r0_w0_c1_i0_cl5_", "cublaslt_a66_t17_s35_k1_r0_w0_c1_i0_cl5x",
                        "cublaslt_a-66_t17_s35_k1_r0_w0_c1_i0_cl5", "cublaslt_a+66_t17_s35_k1_r0_w0_c1_i0_cl5",
                        "cublaslt_a066_t17_s35_k1_r0_w0_c1_i0_cl5", "cublaslt_a66_t17_s35_k0_r0_w0_c1_i0_cl5",
                        "cublaslt_a66_t17_s35_k1_r0_w0_c1_i0_cl65536", "cublaslt_a66_t17_s35_k1_r0_w0_c1_i70000_cl5",
                        "cublaslt_a2147483648_t17_s35_k1_r0_w0_c1_i0_cl5", "cublaslt_a66_t17_s35_k1_r0_c1_w0_i0_cl5",
                        "sm90_a66_t17_s35_k1_r0_w0_c1_i0_cl5", "cublaslt_a_t17_s35_k1_r0_w0_c1_i0_cl5", ""})
    EXPECT_FALSE(parse_lt_algo_name(s).has_value()) << s;
}

TEST(LtAlgo, RegistryMakesTheKernelOnce) {
  const Registry& r = Registry::get();
  const std::string name = "cublaslt_a66_t18_s35_k1_r0_w0_c3_i0_cl2";
  const Kernel* k = r.find(name);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->name(), name);
  EXPECT_EQ(k->backend(), Backend::cublaslt);
  EXPECT_EQ(r.find(name), k) << "one kernel per name";
  EXPECT_EQ(find_kernel(name), k);
  for (const Kernel* a : r.all()) EXPECT_NE(a, k) << "made kernels are not among the registered ones";
  EXPECT_TRUE(k->deterministic());
  // A split of K summed in place (reduction scheme 1) has no documented order.
  EXPECT_FALSE(r.find("cublaslt_a66_t18_s35_k2_r1_w0_c3_i0_cl2")->deterministic());
  EXPECT_TRUE(r.find("cublaslt_a66_t18_s35_k2_r2_w0_c3_i0_cl2")->deterministic());
  EXPECT_EQ(r.find("cublaslt_a66_t18_s35_k1_r0_w0_c3_i0_cl02"), nullptr);
  EXPECT_EQ(r.find("cublaslt_h99"), nullptr);
}

TEST(LtAlgo, WithoutGpuRefusesWithReason) {
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) GTEST_SKIP() << "a GPU is present: the GPU tests check the algorithm";
  cudaGetLastError();
  const Kernel* k = Registry::get().find("cublaslt_a66_t18_s35_k1_r0_w0_c3_i0_cl2");
  ASSERT_NE(k, nullptr);
  Problem p = testing::problem_mnk(256, 4096, 4096);
  p.ldx = p.ldw = 4096;
  p.ldy = 4096;
  const Verdict v = k->can_implement(p);
  EXPECT_FALSE(v.ok());
  EXPECT_NE(v.reason.find("needs a GPU"), std::string::npos) << v.reason;
  EXPECT_TRUE(Registry::get().search(p, SearchDepth::wide, {Backend::cublaslt}).empty()) << "no search without a GPU";
}

TEST(LtAlgo, SearchDepthNames) {
  for (SearchDepth d : {SearchDepth::none, SearchDepth::near, SearchDepth::wide}) {
    SearchDepth back = SearchDepth::none;
    ASSERT_TRUE(parse_search_depth(search_depth_name(d), &back)) << search_depth_name(d);
    EXPECT_EQ(back, d);
  }
  SearchDepth d = SearchDepth::near;
  for (const char* s : {"", "Wide", "all", "wide ", "1"}) EXPECT_FALSE(parse_search_depth(s, &d)) << s;
  EXPECT_EQ(d, SearchDepth::near) << "a failed parse leaves the value";
}

}  // namespace
}  // namespace tgemm::cublaslt_detail
