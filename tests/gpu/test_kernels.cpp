// Every registered kernel against the reference kernel on fresh random data: odd shapes, tails, large
// leading dimensions, every dtype combination, bias or not; Y poisoned, guards checked, reruns bit-identical.
#include <algorithm>
#include <cstring>

#include "gpu_util.h"
#include "backends/sm90/sm90_kernel_base.h"
#include "registry/registry.h"

namespace tgemm::testing {
namespace {

std::vector<Case> cases_for(const Kernel& k) {
  std::vector<Case> cs;
  const Limits& l = k.limits();
  int64_t pad = l.ld_multiple > 1 ? l.ld_multiple : 3;
  bool small_m = l.max_m <= 64;
  std::vector<std::array<int64_t, 3>> shapes;
  if (small_m) {
    // M tiles above 16 also at 17 and max - 1: each block of 8 X rows (the mma's N) partly and wholly used.
    std::vector<int64_t> ms = {1, 2, 3, l.max_m / 2 + 1, l.max_m};
    if (l.max_m > 16) ms.insert(ms.end(), {17, l.max_m - 1});
    for (int64_t m : ms)
      if (m >= 1 && m <= l.max_m) shapes.push_back({m, 1000 + 24, 4096});
    shapes.push_back({1, 3, 8});
    shapes.push_back({l.max_m, 4104, 1048});
    // Odd N and a partial last 64-element unit of K (the persistent kernel's 2D copies).
    shapes.push_back({l.max_m > 1 ? l.max_m - 1 : 1, 1031, 1048});
    // K >= 8192 and 9 row tiles of 128 rows: the "auto" ws kernels of M tile 32 / 64 split K across blocks here
    // (skinny_config.h, ws_auto_shape), the last split ending in a partial unit.
    shapes.push_back({l.max_m, 1031, 8216});
    // The same with N a multiple of 8, which the persistent (TMA) kernels need for ldy.
    if (k.name().find("_ws_") != std::string::npos) {
      shapes.push_back({l.max_m, 1032, 8216});
      // Balanced row tiles of a row count that is no multiple of 8 (skinny_config.h, ws_tile_rows: 28 rows for WK 4),
      // packed stages and a partial last unit.
      shapes.push_back({l.max_m > 1 ? l.max_m - 1 : 1, 3584, 1048});
      // M tiles 32 and 64 balance only at M <= 16 (kWsBalanceMaxM): 28-row tiles on the M tile 32 kernels, and an
      // 8-row X block partly used.
      if (l.max_m > 16)
        for (int64_t m : {9, 16}) shapes.push_back({m, 3584, 1048});
    }
    // The row-stream kernels' plan (skinny_rs.h): rows in several chunks at the largest K the M tile takes (2 to 6
    // chunks), 16 rows per stage, and blocks of several epilogue tiles (over 64 rows at M = 4, over 256 at M = 1).
    if (k.name().find("_rs_") != std::string::npos) {
      shapes.push_back({l.max_m, 1032, l.max_k});
      shapes.push_back({l.max_m > 1 ? l.max_m - 1 : 1, 2056, 512});
      shapes.push_back({l.max_m, 9000, 1024});
      shapes.push_back({1, 34000, 512});
    }
  } else {
    shapes = {{128, 256, 64}, {300, 520, 1280}, {1000, 1000, 264}, {1, 8, 8}, {129, 136, 72}, {2048, 768, 2048}};
    // sm90 split-K (_skauto): {300, 520, 1280} already runs with 2 splits; {256, 1280, 4096} with 4 (64x160) or
    // more; {1088, 2048, 3072} with a stream-K tail on 132 SMs (136 or 144 tiles: 4 or 12 of them split 8 ways).
    // Other plans: SplitKEveryPlan below.
    if (k.name().find("_skauto_") != std::string::npos) {
      shapes.push_back({256, 1280, 4096});
      shapes.push_back({1088, 2048, 3072});
    } else if (k.name().find("_pp_") != std::string::npos) {
      // The persistent walk past its first round, with partial tiles at both edges in the last one: 4.2-4.4 rounds on
      // 132 SMs (the shapes above fit in one).
      shapes.push_back({4104, 2056, 1048});
    }
    // sm90 swap-AB (small M, K split across a cluster): one token, a partly used token tile, odd N with a K tail
    // (these split 8, 4 and 2 ways); the forced split counts are SwapAbEverySplitCount below.
    if (k.name().find("_swapab_") != std::string::npos)
      for (std::array<int64_t, 3> sh : {std::array<int64_t, 3>{1, 1000, 8216}, {l.tile_m - 3, 4104, 1048}, {l.tile_m + 5, 520, 2056}})
        shapes.push_back(sh);
  }
  if (l.ld_multiple <= 1) {  // kernels that take any leading dimension get odd K and N too
    shapes.push_back({small_m ? l.max_m : 77, 131, 97});
    shapes.push_back({small_m ? 1 : 255, 7, 13});
  } else if (!small_m) {
    // Odd N and K in padded rows (each leading dimension the row plus a pad, rounded up to the multiple: ld_pad below):
    // N's last 16-byte chunk is partly Y's padding, which no store may touch (TMA stores write whole 16-byte chunks).
    shapes.push_back({257, 383, 1001});
  }
  // The padded case's leading dimensions: `pad`, 2 `pad` and `pad` elements past the row, rounded up to the multiple.
  const int64_t lm = std::max<int64_t>(l.ld_multiple, 1);
  auto ld_pad = [lm](int64_t row, int64_t extra) { return (row + extra + lm - 1) / lm * lm - row; };
  for (auto [m, n, kk] : shapes)
    for (DType in : {DType::bf16, DType::fp16})
      for (DType out : {DType::bf16, DType::fp16, DType::fp32})
        for (int bias : {0, 1, 2}) {
          cs.push_back({m, n, kk, in, out, bias, 0, 0, 0});
          if (bias == 1) cs.push_back({m, n, kk, in, out, bias, ld_pad(kk, pad), ld_pad(kk, 2 * pad), ld_pad(n, pad)});
        }
  return cs;
}

TEST(Kernels, EveryKernelMatchesReference) {
  std::unique_ptr<Dispatcher> d;
  TGEMM_OK(untabled_dispatcher(&d));
  uint64_t seed = 5000;
  int ran_kernels = 0;
  for (const Kernel* k : kernels()) {
    if (k->backend() == Backend::reference) continue;
    int ran = 0;
    for (const Case& c : cases_for(*k)) {
      Guarded g;
      TGEMM_OK(make_guarded(c, seed += 7, &g));
      if (!k->can_implement(g.args().p).ok()) continue;
      ++ran;
      expect_kernel_matches(*d, *k, g, ran % 4 == 1);
      if (::testing::Test::HasFailure()) return;  // one kernel's failure is enough to read
    }
    EXPECT_GT(ran, 0) << k->name() << " ran no case";
    ++ran_kernels;
  }
  std::printf("checked %d kernels\n", ran_kernels);
}

// The swap-AB kernels sum a cluster's partial tiles through distributed shared memory: every split count (1, 2, 4,
// 8) against the reference, at an M that leaves part of the token tile unused, odd N and a K tail.
TEST(Kernels, SwapAbEverySplitCount) {
  int ran = 0;
  uint64_t seed = 9100;
  for (const Kernel* k : kernels()) {
    if (k->name().find("_swapab_") == std::string::npos) continue;
    const auto* sk = static_cast<const sm90::Sm90KernelBase*>(k);
    const DType in = sk->config().in;
    for (uint32_t s : {1u, 2u, 4u, 8u})
      for (std::array<int64_t, 3> sh : {std::array<int64_t, 3>{k->limits().tile_m - 1, 1000, 4104}, {3, 392, 1000}}) {
        const Case c{sh[0], sh[1], sh[2], in, s % 4 == 0 ? DType::fp32 : in, int(s % 3), 0, 0, 0};
        Guarded g;
        TGEMM_OK(make_guarded(c, seed += 11, &g));
        ASSERT_TRUE(k->can_implement(g.args().p).ok()) << k->name() << " " << c.str();
        TGEMM_OK(sk->run_splits(g.args(), nullptr, 0, {s}, nullptr));
        CUDA_OK(cudaDeviceSynchronize());
        bench::Compare cmp;
        TGEMM_OK(bench::compare(g.args(), bench::default_tol(c.out), &cmp, nullptr));
        EXPECT_EQ(cmp.unwritten, 0) << k->name() << " splits " << s << " " << c.str() << ": " << cmp.to_string();
        EXPECT_EQ(cmp.not_close, 0) << k->name() << " splits " << s << " " << c.str() << ": " << cmp.to_string();
        expect_guards_intact(g, k->name());
        ++ran;
      }
  }
  if (ran == 0) GTEST_SKIP() << "no swap-AB kernel registered in this build";
  std::printf("swap-AB: %d (kernel, split count, shape) runs checked\n", ran);
}

// The sm90 split-K kernels under plans that choose_splits may or may not pick on this GPU: every tile split, a
// stream-K tail of 1, 3 or 7 tiles split 2 to 8 ways, and more split tiles than exist (clamped to all); and, where
// the kernel runs one, column tails of 1 and 7 tiles and of every tile. Odd M and N (at N = 1032 the last column
// tile's second half lies wholly past N), a K tail, every output dtype, bias or not; Y poisoned and every element
// checked, guards intact, the workspace filled with 0xFF first (the counters come from a memset), and a rerun
// bit-identical. A kernel without a column tail refuses a column plan.
TEST(Kernels, SplitKEveryPlan) {
  int ran = 0, column_runs = 0;
  uint64_t seed = 9300;
  constexpr uint32_t kAll = sm90::SplitPlan::kAllTiles;
  const sm90::SplitPlan plans[] = {{2, 1},        {3, 7},        {8, 3},          {5, kAll},
                                   {2, 100000},   {2, 1, true},  {2, 7, true},    {2, kAll, true}};
  for (const Kernel* k : kernels()) {
    if (k->name().find("_skauto_") == std::string::npos || k->backend() != Backend::sm90) continue;
    const auto* sk = static_cast<const sm90::Sm90KernelBase*>(k);
    const sm90::Config& cfg = sk->config();
    int i = 0;
    for (const sm90::SplitPlan& plan : plans)
      for (std::array<int64_t, 3> sh : {std::array<int64_t, 3>{1088, 2048, 1280}, {333, 1032, 2056}}) {
        if (plan.by_columns && !sk->column_tail()) {
          Guarded g;
          TGEMM_OK(make_guarded({sh[0], sh[1], sh[2], cfg.in, DType::bf16, 0, 0, 0, 0}, seed += 11, &g));
          EXPECT_EQ(sk->run_splits(g.args(), nullptr, 0, plan, nullptr).code(), StatusCode::invalid_argument)
              << k->name() << " ran a column plan it has no column tail for";
          continue;
        }
        column_runs += plan.by_columns ? 1 : 0;
        const DType out = i % 3 == 0 ? DType::fp32 : i % 3 == 1 ? DType::bf16 : DType::fp16;
        const Case c{sh[0], sh[1], sh[2], cfg.in, out, i++ % 3, 0, 0, 0};
        Guarded g;
        TGEMM_OK(make_guarded(c, seed += 11, &g));
        ASSERT_TRUE(k->can_implement(g.args().p).ok()) << k->name() << " " << c.str();
        const size_t bytes = size_t(sm90::splitk_workspace_bytes(cfg.bm, cfg.bn, g.args().p, plan));
        void* ws = nullptr;
        if (bytes) {
          CUDA_OK(cudaMalloc(&ws, bytes));
          CUDA_OK(cudaMemset(ws, 0xFF, bytes));
        }
        const std::string what = k->name() + " plan " + std::to_string(plan.splits) + "/" +
                                 std::to_string(plan.split_tiles) + (plan.by_columns ? " by columns " : " ") + c.str();
        TGEMM_OK(sk->run_splits(g.args(), ws, bytes, plan, nullptr));
        CUDA_OK(cudaDeviceSynchronize());
        bench::Compare cmp;
        TGEMM_OK(bench::compare(g.args(), bench::default_tol(c.out), &cmp, nullptr));
        EXPECT_EQ(cmp.unwritten, 0) << what << ": " << cmp.to_string();
        EXPECT_EQ(cmp.not_close, 0) << what << ": " << cmp.to_string();
        expect_guards_intact(g, k->name());
        auto first = host_bytes(g.yv);
        TGEMM_OK(bench::poison(g.yv, nullptr));
        TGEMM_OK(sk->run_splits(g.args(), ws, bytes, plan, nullptr));
        CUDA_OK(cudaDeviceSynchronize());
        EXPECT_TRUE(first == host_bytes(g.yv)) << what << ": rerun is not bit-identical";
        if (ws) cudaFree(ws);
        if (::testing::Test::HasFailure()) return;
        ++ran;
      }
  }
  if (ran == 0) GTEST_SKIP() << "no sm90 split-K kernel registered in this build";
  EXPECT_GT(column_runs, 0) << "no split-K kernel ran a column tail";
  std::printf("sm90 split-K: %d (kernel, plan, shape) runs checked, %d of them column tails\n", ran, column_runs);
}

// A split across CTAs counts arrivals per output tile. With the stream's zeroed counters (ZeroedCounters, as the
// dispatcher passes them) the kernel must leave every counter zero for the next launch, which then needs no memset;
// without them it zeroes counters in its workspace, whatever the workspace held. Both, alternately, on a workspace
// filled with 0xFF before every run: each run right, and the counters all zero after each run that used them.
TEST(Kernels, SplitCountersLeftZero) {
  const KernelCase jobs[] = {
      {"skinny_bf16_m32_ws_skauto_i64", {32, 1032, 8216, DType::bf16, DType::bf16, 1, 0, 0, 0}},
      {"skinny_bf16_m64_ws_skauto_i64", {61, 1032, 8216, DType::bf16, DType::fp32, 2, 0, 0, 0}},
      {"skinny_fp16_m16_ws_skauto_i64", {16, 1280, 8192, DType::fp16, DType::fp16, 0, 0, 0, 0}},
      {"sm90_bf16_64x256x64_s5_c1x1_pp_skauto_i64", {256, 1280, 4096, DType::bf16, DType::bf16, 1, 0, 0, 0}},
  };
  constexpr int64_t kCounters = 65536;
  uint32_t* counters = nullptr;
  CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&counters), kCounters * sizeof(uint32_t)));
  CUDA_OK(cudaMemset(counters, 0, kCounters * sizeof(uint32_t)));
  std::vector<uint32_t> host(kCounters);
  int split_runs = 0;
  uint64_t seed = 9700;
  for (const KernelCase& j : jobs) {
    const Kernel* k = find_kernel(j.kernel);
    if (k == nullptr) continue;  // not registered in this build
    Guarded g;
    TGEMM_OK(make_guarded(j.c, seed += 13, &g));
    ASSERT_TRUE(k->can_implement(g.args().p).ok()) << j.kernel << " " << j.c.str();
    const size_t ws_bytes = k->workspace_bytes(g.args().p);
    if (ws_bytes == 0) continue;  // this kernel does not split here (M tile 16 splits only where the default allows)
    void* ws = nullptr;
    CUDA_OK(cudaMalloc(&ws, ws_bytes));
    for (int r = 0; r < 4; ++r) {
      const bool zeroed = r % 2 == 0;
      CUDA_OK(cudaMemset(ws, 0xFF, ws_bytes));
      TGEMM_OK(bench::poison(g.yv, nullptr));
      GemmArgs a = g.args();
      if (zeroed) a.counters = {counters, kCounters};
      TGEMM_OK(k->run(a, ws, ws_bytes, nullptr));
      CUDA_OK(cudaDeviceSynchronize());
      bench::Compare cmp;
      TGEMM_OK(bench::compare(g.args(), bench::default_tol(j.c.out), &cmp, nullptr));
      EXPECT_EQ(cmp.unwritten, 0) << j.kernel << " run " << r << (zeroed ? " (zeroed counters)" : " (memset)") << ": " << cmp.to_string();
      EXPECT_EQ(cmp.not_close, 0) << j.kernel << " run " << r << ": " << cmp.to_string();
      expect_guards_intact(g, j.kernel);
      CUDA_OK(cudaMemcpy(host.data(), counters, kCounters * sizeof(uint32_t), cudaMemcpyDeviceToHost));
      int64_t nonzero = 0;
      for (uint32_t v : host) nonzero += v != 0;
      EXPECT_EQ(nonzero, 0) << j.kernel << " run " << r << ": counters left non-zero";
    }
    cudaFree(ws);
    ++split_runs;
  }
  cudaFree(counters);
  ASSERT_GE(split_runs, 2) << "the skinny M tile 32 / 64 auto kernels split K at N = 1032, K = 8216";
  std::printf("split counters: %d kernels checked with and without zeroed counters\n", split_runs);
}

}  // namespace
}  // namespace tgemm::testing
