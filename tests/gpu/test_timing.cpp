// The one benchmark routine: operand rotation across candidates, the timing modes, failures reported.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "bench/problem_bench.h"
#include "bench/timing.h"
#include "gpu_util.h"

namespace tgemm::testing {
namespace {

// A launch that records the operand set it was given and enqueues a memset of `bytes` (capturable).
struct Recorder {
  std::vector<int> seen;
  void* buf = nullptr;
  size_t bytes;
  explicit Recorder(size_t b) : bytes(b) { cudaMalloc(&buf, bytes); }
  ~Recorder() { cudaFree(buf); }
  bench::Launch launch() {
    return [this](int r, cudaStream_t s) {
      seen.push_back(r);
      return cudaMemsetAsync(buf, r & 0xff, bytes, s) == cudaSuccess ? Status::Ok() : Status{StatusCode::cuda_error, "memset"};
    };
  }
};

TEST(Timing, PlainLaunchesTakeConsecutiveOperandSetsAcrossCandidates) {
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  Recorder a(1 << 20), b(1 << 20);
  std::vector<bench::Timing> t;
  TGEMM_OK(bench::time_interleaved({a.launch(), b.launch()}, 3, {2, 5, bench::TimingMode::plain}, s, &t));
  // Interleaved A B A B ...: the k-th launch overall takes set k mod 3, so neither candidate ever follows the
  // other on the same (L2-warm) operands.
  ASSERT_EQ(a.seen.size(), 7u);
  ASSERT_EQ(b.seen.size(), 7u);
  for (size_t i = 0; i < a.seen.size(); ++i) {
    EXPECT_EQ(a.seen[i], int((2 * i) % 3)) << i;
    EXPECT_EQ(b.seen[i], int((2 * i + 1) % 3)) << i;
  }
  for (const auto& x : t) {
    EXPECT_TRUE(x.ok);
    EXPECT_GT(x.median_us, 0);
    EXPECT_EQ(x.launches_per_sample, 1);
  }
  EXPECT_DOUBLE_EQ(t[0].ratio_vs_first, 1.0);
  cudaStreamDestroy(s);
}

TEST(Timing, GraphReplayCyclesEveryOperandSetAndAgreesWithPlain) {
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  // 256 MiB memsets (~100 us each): long enough that a plain launch's gap is small beside it.
  Recorder big(size_t(256) << 20);
  std::vector<bench::Timing> plain, graph;
  TGEMM_OK(bench::time_interleaved({big.launch()}, 4, {2, 10, bench::TimingMode::plain}, s, &plain));
  big.seen.clear();
  TGEMM_OK(bench::time_interleaved({big.launch()}, 4, {2, 10, bench::TimingMode::graph}, s, &graph));
  ASSERT_TRUE(graph[0].ok) << graph[0].status.to_string();
  const int len = graph[0].launches_per_sample;
  EXPECT_EQ(len % 4, 0) << "graph length is a multiple of the rotation count";
  // Warm-up 2 + estimate 2 plain launches, then the captured ones: 0, 1, 2, 3, 0, ...
  ASSERT_EQ(big.seen.size(), size_t(4 + len));
  for (int i = 0; i < len; ++i) EXPECT_EQ(big.seen[size_t(4 + i)], i % 4);
  const double r = graph[0].median_us / plain[0].median_us;
  EXPECT_GT(r, 0.8) << "graph " << graph[0].median_us << " us vs plain " << plain[0].median_us << " us per launch";
  EXPECT_LT(r, 1.1) << "graph " << graph[0].median_us << " us vs plain " << plain[0].median_us << " us per launch";
  cudaStreamDestroy(s);
}

// Sustained mode: each sample replays the graph for sustain_ms (timing the last quarter), so the call lasts at
// least iters x candidates x sustain_ms; per launch it agrees with graph replay on a kernel that draws little power.
TEST(Timing, SustainedReplaysForTheRequestedTimeAndAgreesWithGraph) {
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  Recorder big(size_t(256) << 20);
  std::vector<bench::Timing> graph, sus;
  TGEMM_OK(bench::time_interleaved({big.launch()}, 4, {2, 6, bench::TimingMode::graph}, s, &graph));
  const auto t0 = std::chrono::steady_clock::now();
  TGEMM_OK(bench::time_interleaved({big.launch(), big.launch()}, 4, {2, 6, bench::TimingMode::sustained, 40.0}, s, &sus));
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(sus[0].ok && sus[1].ok) << sus[0].status.to_string() << sus[1].status.to_string();
  EXPECT_GE(wall_ms, 0.9 * 6 * 2 * 40) << "6 rounds x 2 candidates x 40 ms";
  const double r = sus[0].median_us / graph[0].median_us;
  EXPECT_GT(r, 0.8) << "sustained " << sus[0].median_us << " us vs graph " << graph[0].median_us << " us per launch";
  EXPECT_LT(r, 1.2) << "sustained " << sus[0].median_us << " us vs graph " << graph[0].median_us << " us per launch";
  cudaStreamDestroy(s);
}

TEST(Timing, AFailingCandidateIsReportedAndTheOthersTimed) {
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  Recorder ok(1 << 20);
  int calls = 0;
  bench::Launch bad = [&](int, cudaStream_t) {
    return ++calls > 3 ? Status{StatusCode::not_supported, "refuses after 3 calls"} : Status::Ok();
  };
  for (bench::TimingMode m : {bench::TimingMode::plain, bench::TimingMode::graph, bench::TimingMode::sustained}) {
    calls = 0;
    std::vector<bench::Timing> t;
    TGEMM_OK(bench::time_interleaved({ok.launch(), bad}, 2, {2, 5, m, 5.0}, s, &t));
    EXPECT_TRUE(t[0].ok) << bench::timing_mode_name(m);
    EXPECT_FALSE(t[1].ok) << bench::timing_mode_name(m);
    EXPECT_NE(t[1].status.message().find("refuses"), std::string::npos) << bench::timing_mode_name(m);
  }
  cudaStreamDestroy(s);
}

}  // namespace
}  // namespace tgemm::testing
