// The benchmark's host-side choices: how many operand sets a shape rotates through, and the order of a round; which
// candidates the tuner drops after a fault or hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "bench/problem_bench.h"
#include "bench/timing.h"
#include "bench/tune.h"
#include "registry/registry.h"

namespace tgemm {
namespace {

constexpr size_t kMB = size_t(1) << 20;
constexpr size_t kL2 = 60 * kMB;  // the H200's

TEST(Rotations, EnoughSetsThatEachComesBackColdAndNeverOnlyOne) {
  // Small sets: up to 64 of them.
  EXPECT_EQ(bench::rotations_for(1 * kMB, kL2), 64);
  // 16 MB sets: the 12 others exceed 3x the L2 between two uses of one.
  EXPECT_EQ(bench::rotations_for(16 * kMB, kL2), 13);
  // A decode layer's W larger than the L2 (28672 x 4096 bf16 = 224 MiB) still gets a second set, so a launch never
  // re-reads the W whose tail the launch before it left in L2.
  EXPECT_EQ(bench::rotations_for(224 * kMB + 8192, kL2), 2);
  // The seed's largest X (2 GB) too; a set beyond the 8 GB budget stays alone.
  EXPECT_EQ(bench::rotations_for(size_t(1966) * kMB, kL2), 2);
  EXPECT_EQ(bench::rotations_for(size_t(9) << 30, kL2), 1);
  EXPECT_EQ(bench::rotations_for(0, kL2), 64);
}

// The top-3 re-check judges by each row's per-round ratio against cuBLASLt (row 0), not by medians.
TEST(FastestByRatio, RatiosDecideAndFailuresDoNotCount) {
  auto timing = [](double median_us, double ratio, bool ok = true) {
    bench::Timing t;
    t.median_us = median_us;
    t.ratio_vs_first = ratio;
    t.ok = ok;
    return t;
  };
  // Row 3 has the lower median, but row 2 read faster than cuBLASLt in the same rounds.
  std::vector<bench::Timing> t = {timing(100, 1), timing(100, 1.0), timing(99, 0.95), timing(90, 1.01)};
  bench::Fastest f = bench::fastest_by_ratio(t, 1, 2);
  EXPECT_EQ(f.index, 2u);
  EXPECT_NEAR(f.gap, 1 / 0.95 - 1, 1e-12);
  // The pick the fastest: gap 0.
  t[1].ratio_vs_first = 0.9;
  f = bench::fastest_by_ratio(t, 1, 2);
  EXPECT_EQ(f.index, 1u);
  EXPECT_EQ(f.gap, 0);
  // A failed candidate, and one without a ratio, are never the fastest.
  t = {timing(100, 1), timing(100, 1.0), timing(50, 0.5, false), timing(50, 0)};
  f = bench::fastest_by_ratio(t, 1, 2);
  EXPECT_EQ(f.index, 1u);
  EXPECT_EQ(f.gap, 0);
}

// bench --pairwise: a candidate's 2-way ratio against the pick, restated against cuBLASLt through the pick's 2-way ratio.
TEST(FastestByRatio, PairwiseThroughThePick) {
  auto timing = [](double ratio, bool ok = true) {
    bench::Timing t;
    t.median_us = 100;
    t.ratio_vs_first = ratio;
    t.ok = ok;
    return t;
  };
  // The pick reads 1.10x cuBLASLt (ratio 1/1.1); the candidate 2% slower than the pick: 1.10 / 1.02 x cuBLASLt.
  bench::Timing c = bench::through_pick(timing(1.02), timing(1 / 1.1));
  EXPECT_NEAR(bench::speed_vs_first(c), 1.1 / 1.02, 1e-12);
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.median_us, 100);
  // Without a speed on either side there is none through the pick.
  EXPECT_EQ(bench::speed_vs_first(bench::through_pick(timing(1.02), timing(0.9, false))), 0);
  EXPECT_EQ(bench::speed_vs_first(bench::through_pick(timing(1.02, false), timing(0.9))), 0);
  EXPECT_EQ(bench::speed_vs_first(bench::through_pick(timing(0), timing(0.9))), 0);
  // Judged against the pick (row 1 at ratio 1), the candidate faster by 4% is the fastest, 4% ahead.
  std::vector<bench::Timing> vs_pick = {bench::Timing{}, timing(1), timing(1 / 1.04), timing(1.01)};
  bench::Fastest f = bench::fastest_by_ratio(vs_pick, 1, 2);
  EXPECT_EQ(f.index, 2u);
  EXPECT_NEAR(f.gap, 0.04, 1e-12);
}

// `bench --pairwise --pair-repeats n`: a launch timed in n separate calls counts as the medians of its calls (ratio and
// time), the least minimum; one failed call makes the whole a failure with that call's status.
TEST(MedianOfCalls, MediansOfTheCallsAndTheFirstFailure) {
  auto call = [](double us, double ratio, double min_us) {
    bench::Timing t;
    t.median_us = us, t.ratio_vs_first = ratio, t.min_us = min_us, t.launches_per_sample = 4, t.ok = true;
    return t;
  };
  bench::Timing m = bench::median_of_calls({call(72.0, 1 / 1.06, 71.0), call(68.4, 1.0, 68.0), call(68.3, 1 / 1.004, 67.9)});
  EXPECT_TRUE(m.ok);
  EXPECT_DOUBLE_EQ(m.median_us, 68.4);
  EXPECT_DOUBLE_EQ(m.ratio_vs_first, 1 / 1.004);
  EXPECT_DOUBLE_EQ(m.min_us, 67.9);
  EXPECT_EQ(m.launches_per_sample, 4);
  // One call: itself.
  bench::Timing one = bench::median_of_calls({call(72.0, 0.95, 71.0)});
  EXPECT_DOUBLE_EQ(one.median_us, 72.0);
  EXPECT_DOUBLE_EQ(one.ratio_vs_first, 0.95);
  bench::Timing bad = call(70, 1, 69);
  bad.ok = false;
  bad.status = Status(StatusCode::cuda_error, "graph launch: boom");
  bench::Timing f = bench::median_of_calls({call(72.0, 1, 71.0), bad});
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.status.message(), "graph launch: boom");
  EXPECT_FALSE(bench::median_of_calls({}).ok);
}

// Shuffled rounds: every round visits each candidate once, cuBLASLt (candidate 0) first, and over a whole cycle of
// rounds each candidate comes right after each other one equally often, counting the pairs across round boundaries
// (the timeline is one long sequence of samples), and never right after itself.
TEST(RoundOrder, EachCandidateFollowsEachOtherEquallyOften) {
  for (size_t n = 1; n <= 9; ++n) {
    const size_t m = n - 1;
    const int cycle = int(m == 0 ? 1 : m % 2 == 0 ? m : 2 * m);
    std::vector<size_t> timeline;
    for (int round = 0; round < 3 * cycle; ++round) {
      const std::vector<size_t> order = bench::round_order(n, round);
      ASSERT_EQ(order.size(), n);
      EXPECT_EQ(order[0], 0u) << "cuBLASLt opens every round";
      std::vector<size_t> sorted = order, all(n);
      std::sort(sorted.begin(), sorted.end());
      std::iota(all.begin(), all.end(), size_t(0));
      ASSERT_EQ(sorted, all) << "n " << n << " round " << round << " is not a permutation";
      EXPECT_EQ(order, bench::round_order(n, round + cycle)) << "the design repeats every cycle";
      timeline.insert(timeline.end(), order.begin(), order.end());
    }
    std::vector<std::vector<int>> follows(n, std::vector<int>(n, 0));  // [predecessor][candidate], cyclic
    for (size_t i = 0; i < timeline.size(); ++i) ++follows[timeline[i]][timeline[(i + 1) % timeline.size()]];
    const int each = n < 2 ? 0 : 3 * cycle / int(m);
    for (size_t a = 0; a < n; ++a)
      for (size_t b = 0; b < n; ++b)
        if (n > 1) EXPECT_EQ(follows[a][b], a == b ? 0 : each) << "n " << n << ": " << b << " after " << a;
  }
  // With 4 candidates over the default 30 rounds (5 cycles of 6), each of the other three follows cuBLASLt in 10
  // rounds and precedes it in 10. The fixed-seed shuffle it replaced put candidate 3 after cuBLASLt in 15 and
  // candidate 1 in 7.
  std::vector<int> after_first(4, 0), before_first(4, 0);
  for (int round = 0; round < 30; ++round) {
    const std::vector<size_t> order = bench::round_order(4, round);
    ++after_first[order[1]];
    ++before_first[order[3]];
  }
  for (size_t c = 1; c < 4; ++c) EXPECT_EQ(after_first[c], 10) << c;
  for (size_t c = 1; c < 4; ++c) EXPECT_EQ(before_first[c], 10) << c;
}

// The tune worker's lines (bench::WorkerLine): what the parent reads is what the worker wrote, and "begin <i> -" marks
// the timing rounds, where the watchdog must not blame the last candidate checked (runs 286, 295 and 306 did).
TEST(Tune, WorkerLinesReadBackAsWritten) {
  using Tag = bench::WorkerLine::Tag;
  bench::WorkerLine w = bench::parse_worker_line(bench::worker_begin_line(7, "sm90_bf16_128x256x64_s4_c2x1_i64"));
  EXPECT_EQ(w.tag, Tag::begin);
  EXPECT_EQ(w.shape, 7);
  EXPECT_EQ(w.kernel, "sm90_bf16_128x256x64_s4_c2x1_i64");
  w = bench::parse_worker_line(bench::worker_begin_line(7, ""));
  EXPECT_EQ(w.tag, Tag::begin);
  EXPECT_EQ(w.kernel, "");
  w = bench::parse_worker_line(bench::worker_alive_line(3));
  EXPECT_EQ(w.tag, Tag::alive);
  EXPECT_EQ(w.shape, 3);

  bench::CandidateResult r;
  r.kernel = "cublaslt_a66_t209_s35_k1_r0_w0_c7_i0_cl2";
  r.ok = true;
  r.us = 8838.8;
  r.err_ratio = 0;
  r.rel_l2 = 1.656e-3;
  r.max_rel = 3.882e-3;
  r.pieces = 3;
  r.finalist = true;
  r.confirm_x = 1.0912;
  r.pair_x = 0.9359;
  for (const std::string note : {"", "err_ratio 0.2 > 0.05\nsecond line"}) {
    r.note = note;
    w = bench::parse_worker_line(bench::worker_cand_line(12, r));
    ASSERT_EQ(w.tag, Tag::cand) << note;
    EXPECT_EQ(w.shape, 12);
    EXPECT_EQ(w.cand.kernel, r.kernel);
    EXPECT_TRUE(w.cand.ok);
    EXPECT_NEAR(w.cand.us, r.us, 1e-4);
    EXPECT_NEAR(w.cand.rel_l2, r.rel_l2, 1e-6);
    EXPECT_NEAR(w.cand.max_rel, r.max_rel, 1e-6);
    EXPECT_EQ(w.cand.pieces, 3);
    EXPECT_TRUE(w.cand.finalist);
    EXPECT_NEAR(w.cand.confirm_x, r.confirm_x, 1e-5);
    EXPECT_NEAR(w.cand.pair_x, r.pair_x, 1e-5);
    EXPECT_EQ(w.cand.note, note.empty() ? "" : "err_ratio 0.2 > 0.05 second line");
  }
  w = bench::parse_worker_line(bench::worker_error_line(4, "cublaslt_h5 faulted: an illegal\naddress"));
  EXPECT_EQ(w.tag, Tag::error);
  EXPECT_EQ(w.shape, 4);
  EXPECT_EQ(w.message, "cublaslt_h5 faulted: an illegal address");
  w = bench::parse_worker_line(bench::worker_error_line(-1, "no CUDA device"));
  EXPECT_EQ(w.tag, Tag::error);
  EXPECT_EQ(w.shape, -1);
  EXPECT_EQ(w.message, "no CUDA device");
  w = bench::parse_worker_line(bench::worker_done_line(4));
  EXPECT_EQ(w.tag, Tag::done);
  EXPECT_EQ(w.shape, 4);
  EXPECT_EQ(bench::parse_worker_line("cand 4 truncated 1").tag, Tag::unknown);
  EXPECT_EQ(bench::parse_worker_line("").tag, Tag::unknown);
  EXPECT_EQ(bench::parse_worker_line("tune: progress 3").tag, Tag::unknown);
}

// After a configured cuBLASLt algorithm hangs, the tuner drops its other cluster shapes on that shape (each hang costs
// a timeout and a restart of the shape); other kernels, and the same tile with another custom option, stay.
TEST(Tune, SkipDropsTheHungKernelsFamily) {
  const Registry& r = Registry::get();
  const Kernel* hung = r.find("cublaslt_a66_t209_s35_k1_r0_w0_c7_i0_cl2");
  const Kernel* sibling = r.find("cublaslt_a66_t209_s35_k1_r0_w0_c7_i0_cl5");
  const Kernel* other_custom = r.find("cublaslt_a66_t209_s35_k1_r0_w0_c6_i0_cl2");
  const Kernel* dflt = r.cublaslt();
  ASSERT_TRUE(hung && sibling && other_custom && dflt);
  EXPECT_EQ(hung->fault_family(), "cublaslt_a66_t209_s35_k1_r0_w0_c7_i0");
  EXPECT_EQ(sibling->fault_family(), hung->fault_family());
  EXPECT_EQ(dflt->fault_family(), dflt->name());
  const std::vector<const Kernel*> all = {dflt, hung, other_custom, sibling};
  EXPECT_EQ(bench::drop_skipped(all, {hung->name()}), (std::vector<const Kernel*>{dflt, other_custom}));
  EXPECT_EQ(bench::drop_skipped(all, {}), all);
  // A skipped name that is none of the candidates (a kernel of the registry's search that this call did not list)
  // drops nothing else.
  EXPECT_EQ(bench::drop_skipped(all, {"cublaslt_a66_t421_s35_k1_r0_w0_c7_i0_cl2"}), all);
  // Every other kernel is its own family: skipping one drops that one only.
  std::vector<const Kernel*> some;
  for (const Kernel* k : r.all())
    if (k->backend() != Backend::cublaslt && some.size() < 6) some.push_back(k);
  ASSERT_GE(some.size(), 2u);
  const std::vector<const Kernel*> left = bench::drop_skipped(some, {some[1]->name()});
  ASSERT_EQ(left.size(), some.size() - 1);
  EXPECT_EQ(std::find(left.begin(), left.end(), some[1]), left.end());
}

}  // namespace
}  // namespace tgemm
