// The one benchmark routine: operand rotation across candidates, the timing modes, failures reported.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bench/problem_bench.h"
#include "bench/timing.h"
#include "bench/tune.h"
#include "gpu_util.h"
#include "registry/registry.h"

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

// TimingOptions::shuffle: each timed round visits every candidate once, in orders that differ between rounds (warm-up
// keeps the fixed order), and each candidate's ratio is still taken against candidate 0 of the same round.
TEST(Timing, ShuffledOrderVisitsEveryCandidateEachRoundInChangingOrders) {
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  void* buf = nullptr;
  CUDA_OK(cudaMalloc(&buf, 1 << 20));
  std::vector<int> order;
  auto launch = [&](int id) -> bench::Launch {
    return [&, id](int, cudaStream_t st) {
      order.push_back(id);
      return cudaMemsetAsync(buf, id, 1 << 20, st) == cudaSuccess ? Status::Ok() : Status{StatusCode::cuda_error, "memset"};
    };
  };
  constexpr int kN = 4, kRounds = 12;
  std::vector<bench::Launch> launches;
  for (int id = 0; id < kN; ++id) launches.push_back(launch(id));
  std::vector<bench::Timing> t;
  bench::TimingOptions opt{1, kRounds, bench::TimingMode::plain};
  opt.shuffle = true;
  TGEMM_OK(bench::time_interleaved(launches, 1, opt, s, &t));
  ASSERT_EQ(order.size(), size_t(kN * (1 + kRounds)));
  EXPECT_EQ(std::vector<int>(order.begin(), order.begin() + kN), (std::vector<int>{0, 1, 2, 3}));
  std::set<std::vector<int>> seen;
  std::set<int> predecessors_of_1;
  for (int r = 1; r <= kRounds; ++r) {
    std::vector<int> round(order.begin() + r * kN, order.begin() + (r + 1) * kN);
    EXPECT_EQ(std::set<int>(round.begin(), round.end()).size(), size_t(kN)) << "round " << r;
    seen.insert(round);
  }
  for (size_t i = kN + 1; i < order.size(); ++i)
    if (order[i] == 1) predecessors_of_1.insert(order[i - 1]);
  EXPECT_GE(seen.size(), 4u) << "the rounds' orders vary";
  EXPECT_GE(predecessors_of_1.size(), 3u) << "a candidate runs after different ones";
  for (const bench::Timing& x : t) {
    EXPECT_TRUE(x.ok);
    EXPECT_GT(x.median_us, 0);
    EXPECT_GT(x.ratio_vs_first, 0);
  }
  EXPECT_DOUBLE_EQ(t[0].ratio_vs_first, 1.0);
  CUDA_OK(cudaFree(buf));
  CUDA_OK(cudaStreamDestroy(s));
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

// TimingOptions::heartbeat: once per warm-up round and per timed round in plain mode; in graph mode also per round of
// the length estimate (2) and per captured graph. The tuner's watchdog counts these as progress (cmd_tune.cpp).
TEST(Timing, HeartbeatAfterEveryRound) {
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  Recorder a(1 << 20), b(1 << 20);
  for (bench::TimingMode mode : {bench::TimingMode::plain, bench::TimingMode::graph}) {
    int beats = 0;
    bench::TimingOptions opt{3, 5, mode};
    opt.heartbeat = [&] { ++beats; };
    std::vector<bench::Timing> t;
    TGEMM_OK(bench::time_interleaved({a.launch(), b.launch()}, 2, opt, s, &t));
    EXPECT_TRUE(t[0].ok && t[1].ok);
    EXPECT_EQ(beats, mode == bench::TimingMode::plain ? 3 + 5 : 3 + 2 + 2 + 5) << bench::timing_mode_name(mode);
  }
  cudaStreamDestroy(s);
}

// tune_shape names each candidate before its first run alone, then "" once before the timing rounds (a hang there is
// no single kernel's: runs 295 and 306 blamed the last checked one), and its timing rounds beat the heartbeat.
TEST(Tune, BeginNamesEachCandidateThenMarksTheTimingRounds) {
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  bench::TuneOptions opt;
  opt.backends = {Backend::skinny, Backend::cublaslt};
  opt.timing = {2, 4, bench::TimingMode::plain};
  int beats = 0;
  opt.timing.heartbeat = [&] { ++beats; };
  std::vector<std::string> begun;
  std::vector<bench::CandidateResult> res;
  TGEMM_OK(bench::tune_shape(Shape{8, 3584, 3584}, opt, s, &res, [&](const std::string& k) { begun.push_back(k); }));
  ASSERT_EQ(begun.size(), res.size() + 1);
  for (size_t i = 0; i < res.size(); ++i) EXPECT_EQ(begun[i], res[i].kernel);
  EXPECT_EQ(begun.back(), "");
  EXPECT_GE(beats, opt.timing.warmup + opt.timing.iters);
  cudaStreamDestroy(s);
}

// The tuner's confirm round (TuneOptions::confirm): only a pick other than cuBLASLt's default is timed again against
// it, and the table row follows that round's verdict. 8 x 3584 x 3584: the skinny kernels lead cuBLASLt by ~25%
// there (docs/decode_report.md), so the pick is almost always one of them; the checks hold whichever wins.
TEST(Tune, ConfirmRoundTimesOnlyAPickOtherThanTheDefault) {
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  const Kernel* lt = Registry::get().cublaslt();
  ASSERT_NE(lt, nullptr);
  const Shape shape{8, 3584, 3584};
  bench::TuneOptions opt;
  opt.backends = {Backend::skinny, Backend::cublaslt};
  opt.timing = {2, 10, bench::TimingMode::graph, 200, true};
  // The pause before the confirm round (TuneOptions::confirm_pause_ms) changes when it runs, not what it decides on.
  for (auto [confirm, pause_ms] : {std::pair{true, 0.0}, std::pair{true, 5.0}, std::pair{false, 0.0}}) {
    opt.confirm = confirm;
    opt.confirm_pause_ms = pause_ms;
    std::vector<bench::CandidateResult> res;
    TGEMM_OK(bench::tune_shape(shape, opt, s, &res));
    const int pick = bench::pick_index(res, lt->name(), opt.keep_default_pct);
    ASSERT_GE(pick, 0);
    const bool other = res[size_t(pick)].kernel != lt->name();
    for (size_t i = 0; i < res.size(); ++i) {
      if (confirm && other && int(i) == pick) {
        EXPECT_GT(res[i].confirm_x, 0.3) << res[i].kernel;
        EXPECT_LT(res[i].confirm_x, 3.0) << res[i].kernel;
      } else {
        EXPECT_EQ(res[i].confirm_x, 0) << res[i].kernel << (confirm ? "" : " (no confirm round)");
      }
    }
    TableRow row;
    ASSERT_TRUE(bench::best_row(shape, res, DeviceInfo::current(), &row, lt->name(), opt.keep_default_pct));
    const bool kept = !confirm || !other || res[size_t(pick)].confirm_x > 1;
    EXPECT_EQ(row.kernel_name, kept ? res[size_t(pick)].kernel : lt->name());
  }
  cudaStreamDestroy(s);
}

}  // namespace
}  // namespace tgemm::testing
