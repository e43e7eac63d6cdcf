// The cuBLASLt backend's registered answers: a table row names a heuristic answer by its index (cublaslt_hN), so a
// query for the registered count must put the same algorithms first as the shorter query the table was tuned with.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "backends/cublaslt/cublaslt.h"
#include "table/table.h"

namespace tgemm::testing {
namespace {

// The suites' problems as the bench builds them (packed, 16-byte aligned, bias of the output dtype).
std::vector<Problem> suite_problems() {
  std::vector<Problem> out;
  for (const char* suite : {"seed", "models"}) {
    std::vector<Shape> shapes;
    const Status s = read_shapes(std::string(TGEMM_SOURCE_DIR) + "/shapes/" + suite + ".csv", &shapes);
    EXPECT_TRUE(s.ok()) << s.message();
    for (const Shape& sh : shapes) {
      Problem p;
      p.m = sh.m, p.n = sh.n, p.k = sh.k;
      p.in_dtype = sh.dtype, p.out_dtype = sh.outdtype;
      p.has_bias = sh.bias, p.bias_dtype = sh.outdtype;
      p.ldx = sh.k, p.ldw = sh.k, p.ldy = sh.n;
      out.push_back(p);
    }
  }
  return out;
}

TEST(CublasLtGpu, LongerHeuristicQueryKeepsTheOrder) {
  constexpr int kTunedWith = 8;  // the count the shipped table's cublaslt_hN rows were tuned with
  const int count = cublaslt_detail::heuristic_count();
  ASSERT_GE(count, kTunedWith);
  int problems = 0, extra = 0;
  for (const Problem& p : suite_problems()) {
    std::vector<std::array<uint64_t, 8>> shorter, longer;
    ASSERT_TRUE(cublaslt_detail::heuristic_algos(p, kTunedWith, &shorter).ok());
    ASSERT_TRUE(cublaslt_detail::heuristic_algos(p, count, &longer).ok());
    ASSERT_GE(longer.size(), shorter.size());
    for (size_t i = 0; i < shorter.size(); ++i)
      ASSERT_EQ(longer[i], shorter[i]) << "answer " << i << " of " << p.m << "x" << p.n << "x" << p.k
                                       << (p.has_bias ? " bias" : "") << " moved with a longer query";
    ++problems;
    extra += int(longer.size() - shorter.size());
  }
  std::printf("cuBLASLt heuristic: %d problems, %d answers past the %dth\n", problems, extra, kTunedWith);
  EXPECT_GT(problems, 200);
}

}  // namespace
}  // namespace tgemm::testing
