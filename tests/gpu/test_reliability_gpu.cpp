// Reliability on the GPU (issue 8): many host threads on many streams through every backend, tables reloaded
// while serving, no leaks over 10,000 calls and 1,000 dispatcher lifetimes, and every backend inside a CUDA graph.
// Every result is checked against the reference kernel (bench::compare) on poisoned Y, and the guard bytes around
// every operand are checked afterwards.
//
// TGEMM_STRESS_SECONDS sets how long the concurrency tests run (default 10 s, and 5 s for the reload test).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "backends/cublaslt/cublaslt.h"
#include "common/temp_path.h"
#include "gpu_util.h"
#include "registry/registry.h"
#include "table/table.h"

namespace tgemm::testing {
namespace {

using Clock = std::chrono::steady_clock;

double stress_seconds(double def) {
  const char* s = std::getenv("TGEMM_STRESS_SECONDS");
  return s && *s ? std::max(1.0, std::atof(s)) : def;
}

// Shapes meant to reach each backend: small M (skinny), large aligned (sm90), odd leading dimensions or an odd
// pointer alignment that TMA cannot take (cuBLASLt). Which backend each really reaches is read from the plan.
std::vector<Case> candidate_cases() {
  return {
      // small M: skinny's territory (M <= 64)
      {1, 4096, 4096, DType::bf16, DType::bf16, 0},
      {8, 1048, 2048, DType::bf16, DType::bf16, 1},
      {16, 3000, 1000, DType::fp16, DType::fp32, 2},
      {61, 520, 1288, DType::bf16, DType::bf16, 1},
      {3, 7, 13, DType::bf16, DType::bf16, 1},
      // large, aligned: sm90's (its untuned default needs 4 rounds of tiles on the SMs; with fewer an fp32 bias for
      // bf16 Y, which cuBLASLt refuses, takes sm90 as the fallback)
      {8192, 2048, 1024, DType::bf16, DType::bf16, 0},
      {1024, 1536, 512, DType::bf16, DType::bf16, 2},
      {8192, 2048, 2048, DType::fp16, DType::fp16, 0},
      {1000, 1032, 520, DType::bf16, DType::bf16, 1},
      {512, 768, 256, DType::bf16, DType::fp32, 2},
      // odd leading dimensions (not multiples of 8 elements): no TMA kernel takes them, cuBLASLt does
      {300, 520, 1280, DType::bf16, DType::bf16, 1, 1, 0, 0},
      {777, 333, 97, DType::fp16, DType::fp16, 0, 1, 1, 1},
      {129, 136, 72, DType::bf16, DType::fp32, 2, 3, 0, 0},
      {200, 264, 136, DType::bf16, DType::fp32, 1, 1, 0, 0},
  };
}

// The backends this build registers kernels for (the reference kernel is for verification only).
std::set<Backend> registered_backends() {
  std::set<Backend> b;
  for (const Kernel* k : kernels())
    if (k->backend() != Backend::reference) b.insert(k->backend());
  return b;
}

std::string names(const std::set<Backend>& bs) {
  std::string s;
  for (Backend b : bs) s += (s.empty() ? "" : ", ") + std::string(backend_name(b));
  return s;
}

// Operands shared by every thread (X, W, bias are only read), with the plan mm makes for them.
struct Shared {
  Guarded g;
  Backend backend = Backend::reference;
  std::string kernel;
  bool deterministic = false;
};

// Allocates every candidate and reads the global dispatcher's plan for it; fails the test if a registered backend
// gets no shape.
void prepare(std::vector<std::unique_ptr<Shared>>* out, uint64_t seed) {
  const DeviceInfo dev = DeviceInfo::current();
  std::set<Backend> covered;
  std::string routing;
  // TGEMM_STRESS_SHAPES=0,5,6 keeps only those candidates (bisecting a failure; no coverage check then).
  const char* only = std::getenv("TGEMM_STRESS_SHAPES");
  std::set<int> keep;
  for (const char* q = only; q && *q; ++q)
    if (q == only || q[-1] == ',') keep.insert(std::atoi(q));
  int index = -1;
  for (const Case& c : candidate_cases()) {
    if (++index, !keep.empty() && !keep.count(index)) continue;
    auto s = std::make_unique<Shared>();
    TGEMM_OK(make_guarded(c, seed += 11, &s->g));
    const Plan& pl = Dispatcher::global().plan(s->g.args().p, dev);
    ASSERT_TRUE(pl.status.ok()) << c.str() << ": " << pl.status.to_string();
    s->backend = pl.kernel->backend();
    s->kernel = pl.kernel->name();
    s->deterministic = pl.kernel->deterministic();
    covered.insert(s->backend);
    routing += "  " + c.str() + " -> " + s->kernel + " (" + std::to_string(pl.pieces.size()) + " piece(s))\n";
    out->push_back(std::move(s));
  }
  std::printf("routing:\n%s", routing.c_str());
  for (Backend b : registered_backends())
    if (keep.empty()) EXPECT_TRUE(covered.count(b)) << "no candidate shape reaches backend " << backend_name(b)
                                  << " (registered: " << names(registered_backends()) << "); routing:\n"
                                  << routing;
}

// A guarded buffer shaped like the output `like` (4 KiB guards each side, checked by the caller as it needs): one
// more output of the same problem, so several runs of it can be in flight at once.
Status another_output(const MatrixView& like, bench::Guarded* keep, MatrixView* out) {
  if (Status s = bench::Guarded::make(span_bytes(like), 4096, 4096, keep); !s.ok()) return s;
  *out = like;
  out->data = keep->data();
  return Status::Ok();
}

// Waits for `done` to reach `n`, at most `limit`; past it, the test reports where each thread was and exits the
// process (a hung thread inside a CUDA call cannot be joined or cancelled).
void watchdog(std::mutex& mu, std::condition_variable& cv, const int& done, int n, std::chrono::seconds limit,
              const std::function<std::string()>& progress) {
  std::unique_lock<std::mutex> lock(mu);
  if (!cv.wait_for(lock, limit, [&] { return done == n; })) {
    ADD_FAILURE() << "deadlock or hang: threads still running after " << limit.count() << " s\n" << progress();
    std::fprintf(stderr, "watchdog: threads still running after %lld s\n%s", (long long)limit.count(), progress().c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(3);
  }
}

// (a) 8 host threads, each on its own stream, call tgemm::mm on every candidate shape in turn (each thread starting
// at a different one) for TGEMM_STRESS_SECONDS; every result is compared with the reference kernel, results of a
// deterministic kernel must be bit-identical across threads and calls, no thread may stall (watchdog), and no
// byte outside any Y may change.
TEST(ConcurrencyGpu, EightThreadsEightStreamsEveryBackend) {
  std::vector<std::unique_ptr<Shared>> shared;
  prepare(&shared, 9100);
  if (HasFailure()) return;
  const int kThreads = 8;
  const double seconds = stress_seconds(10);
  struct Worker {
    cudaStream_t stream = nullptr;
    std::vector<bench::Guarded> y;  // one Y per shape
    std::vector<MatrixView> yv;
    std::atomic<int64_t> calls{0};
    std::atomic<int> where{-1};  // shape index being run
    std::atomic<int> phase{0};   // 0 idle, 1 mm, 2 compare, 3 copy
    std::vector<int64_t> per_shape;
  };
  std::vector<std::unique_ptr<Worker>> workers;
  for (int t = 0; t < kThreads; ++t) {
    auto w = std::make_unique<Worker>();
    CUDA_OK(cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking));
    for (auto& s : shared) {
      bench::Guarded y;
      MatrixView v;
      TGEMM_OK(another_output(s->g.yv, &y, &v));
      w->yv.push_back(v);
      w->y.push_back(std::move(y));
    }
    w->per_shape.assign(shared.size(), 0);
    workers.push_back(std::move(w));
  }
  CUDA_OK(cudaDeviceSynchronize());

  std::mutex err_mu;
  std::vector<std::string> errors;
  auto fail = [&](const std::string& e) {
    std::lock_guard<std::mutex> lock(err_mu);
    if (errors.size() < 50) errors.push_back(e);
  };
  std::mutex ref_mu;
  std::map<size_t, std::vector<unsigned char>> first_result;  // shape -> bytes of the first checked result
  std::mutex done_mu;
  std::condition_variable done_cv;
  int done = 0;
  const auto deadline = Clock::now() + std::chrono::milliseconds(int64_t(seconds * 1000));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Worker& w = *workers[size_t(t)];
      size_t i = size_t(t) % shared.size();
      while (Clock::now() < deadline) {
        {
          std::lock_guard<std::mutex> lock(err_mu);
          if (errors.size() >= 20) break;
        }
        const Shared& s = *shared[i];
        const MatrixView& yv = w.yv[i];
        std::string what = "thread " + std::to_string(t) + " " + s.g.c.str() + " (" + s.kernel + ")";
        w.where = int(i);
        w.phase = 1;
        if (Status st = bench::poison(yv, w.stream); !st.ok()) fail(what + ": poison: " + st.to_string());
        if (Status st = mm(s.g.xv, s.g.wv, s.g.bias(), yv, w.stream); !st.ok()) fail(what + ": mm: " + st.to_string());
        w.phase = 2;
        GemmArgs a;
        (void)make_problem(s.g.xv, s.g.wv, s.g.bias(), yv, &a.p);
        a.x = s.g.xv.data, a.w = s.g.wv.data, a.bias = s.g.c.bias ? s.g.bv.data : nullptr, a.y = yv.data;
        bench::Compare cmp;
        if (Status st = bench::compare(a, bench::default_tol(s.g.c.out), &cmp, w.stream); !st.ok()) {
          fail(what + ": compare: " + st.to_string());
        } else if (cmp.unwritten != 0 || cmp.not_close != 0) {
          fail(what + ": " + cmp.to_string());
        }
        if (s.deterministic) {
          w.phase = 3;
          std::vector<unsigned char> bytes = host_bytes(yv, w.stream);
          std::lock_guard<std::mutex> lock(ref_mu);
          auto it = first_result.find(i);
          if (it == first_result.end()) first_result.emplace(i, std::move(bytes));
          else if (it->second != bytes) fail(what + ": not bit-identical to an earlier result of the same deterministic kernel");
        }
        w.phase = 0;
        ++w.per_shape[i];
        ++w.calls;
        i = (i + 1) % shared.size();
      }
      if (cudaError_t e = cudaStreamSynchronize(w.stream); e != cudaSuccess) fail("thread " + std::to_string(t) + ": " + cudaGetErrorString(e));
      std::lock_guard<std::mutex> lock(done_mu);
      ++done;
      done_cv.notify_all();
    });
  watchdog(done_mu, done_cv, done, kThreads, std::chrono::seconds(int64_t(seconds) + 300), [&] {
    std::string s;
    for (int t = 0; t < kThreads; ++t)
      s += "  thread " + std::to_string(t) + ": " + std::to_string(workers[size_t(t)]->calls.load()) + " calls, shape " +
           std::to_string(workers[size_t(t)]->where.load()) + ", phase " + std::to_string(workers[size_t(t)]->phase.load()) + "\n";
    return s;
  });
  for (auto& th : threads) th.join();
  for (const std::string& e : errors) ADD_FAILURE() << e;
  int64_t total = 0;
  std::vector<int64_t> per_shape(shared.size(), 0);
  for (int t = 0; t < kThreads; ++t) {
    total += workers[size_t(t)]->calls;
    EXPECT_GE(workers[size_t(t)]->calls.load(), 1) << "thread " << t << " made no progress";
    for (size_t i = 0; i < shared.size(); ++i) per_shape[i] += workers[size_t(t)]->per_shape[i];
  }
  for (size_t i = 0; i < shared.size(); ++i)
    EXPECT_GE(per_shape[i], 1) << shared[i]->g.c.str() << " (" << shared[i]->kernel << ") never ran: raise TGEMM_STRESS_SECONDS";
  std::printf("%d threads, %.0f s: %lld checked mm calls over %zu shapes\n", kThreads, seconds, (long long)total, shared.size());
  // Nothing outside any Y changed, nor the shared inputs.
  for (auto& w : workers) {
    for (size_t i = 0; i < w->y.size(); ++i) {
      int64_t before = -1, after = -1;
      TGEMM_OK(w->y[i].check_guards(&before, &after, nullptr));
      EXPECT_EQ(before + after, 0) << shared[i]->g.c.str() << ": bytes outside Y changed";
    }
    cudaStreamDestroy(w->stream);
  }
  for (auto& s : shared) expect_guards_intact(s->g, "concurrency inputs");
}

// One run of `k` on g's problem into `y` (poisoned first), on the calling thread's cudaStreamPerThread: false on any
// error, else *same tells whether Y's bytes equal `expect`.
bool run_per_thread(Dispatcher& d, const Kernel& k, const Guarded& g, const MatrixView& y,
                    const std::vector<unsigned char>& expect, bool* same) {
  if (!bench::poison(y, cudaStreamPerThread).ok() ||
      !d.run_kernel(k, g.xv, g.wv, g.bias(), y, cudaStreamPerThread).ok() ||
      cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess)
    return false;
  *same = host_bytes(y, cudaStreamPerThread) == expect;
  return true;
}

// What thread t of per_thread_rounds runs: `k` on g's problem into `y`, whose bytes must equal `expect` each time.
struct PerThreadJob {
  const Kernel* k;
  const Guarded* g;
  MatrixView y;
  const std::vector<unsigned char>* expect;
};

// `threads` host threads at once, each running its job `rounds` times through run_per_thread; checks that no call
// failed and that every result equals the job's expected bytes.
void expect_per_thread_rounds(Dispatcher& d, int threads, int rounds, const std::function<PerThreadJob(int)>& job) {
  std::atomic<int> bad{0}, errors{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, j = job(t)] {
      for (int r = 0; r < rounds; ++r) {
        bool same = false;
        if (!run_per_thread(d, *j.k, *j.g, j.y, *j.expect, &same)) {
          ++errors;
          return;
        }
        bad += !same;
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(bad.load(), 0) << "of " << threads * rounds << " results differ from their kernel's result alone";
}

// cudaStreamPerThread is one handle for a different stream in every host thread. A kernel that splits K through
// the workspace (partial tiles there) from 8 threads at once, each on its own per-thread default stream: every
// result must equal, bit for bit, the kernel's result on an idle GPU. With one workspace for the handle, the threads'
// partial tiles would overwrite each other.
TEST(ConcurrencyGpu, PerThreadDefaultStreamsKeepTheirOwnWorkspace) {
  std::unique_ptr<Dispatcher> d;
  TGEMM_OK(untabled_dispatcher(&d));
  const Kernel* k = find_kernel("skinny_bf16_m32_ws_skauto_i64");
  if (k == nullptr) GTEST_SKIP() << "no skinny kernel in this build";
  Guarded g;
  TGEMM_OK(make_guarded({32, 1032, 8216, DType::bf16, DType::bf16, 1}, 9500, &g));
  ASSERT_GT(k->workspace_bytes(g.args().p), 0u) << "the kernel does not split through the workspace here";
  TGEMM_OK(d->run_kernel(*k, g.xv, g.wv, g.bias(), g.yv, cudaStreamPerThread));
  CUDA_OK(cudaStreamSynchronize(cudaStreamPerThread));
  bench::Compare cmp;
  TGEMM_OK(bench::compare(g.args(), bench::default_tol(DType::bf16), &cmp, nullptr));
  ASSERT_EQ(cmp.not_close + cmp.unwritten, 0) << cmp.to_string();
  const std::vector<unsigned char> alone = host_bytes(g.yv, cudaStreamPerThread);
  constexpr int kThreads = 8, kRounds = 40;
  std::vector<bench::Guarded> ys(kThreads);
  std::vector<MatrixView> yv(kThreads);
  for (int t = 0; t < kThreads; ++t) TGEMM_OK(another_output(g.yv, &ys[size_t(t)], &yv[size_t(t)]));
  expect_per_thread_rounds(*d, kThreads, kRounds, [&](int t) { return PerThreadJob{k, &g, yv[size_t(t)], &alone}; });
}

// cuBLASLt's heuristic kernels (cublaslt, cublaslt_h1, ...) share one prepared problem: one matmul descriptor, which
// holds the bias pointer. 8 threads, each with its own operands and bias and one of those kernels, on one problem
// key at once: every result must equal, bit for bit, its kernel's result on its operands alone (checked against the
// reference first). A bias lock per kernel instead of per problem would let one thread's bias into another's Y.
TEST(ConcurrencyGpu, HeuristicKernelsShareTheBiasDescriptorSafely) {
  std::unique_ptr<Dispatcher> d;
  TGEMM_OK(untabled_dispatcher(&d));
  constexpr int kThreads = 8, kRounds = 40;
  const Case c{256, 1032, 1024, DType::bf16, DType::bf16, 1};
  std::vector<Guarded> g(kThreads);
  std::vector<const Kernel*> k(kThreads, nullptr);
  std::vector<std::vector<unsigned char>> alone(kThreads);
  std::vector<const Kernel*> answers;
  TGEMM_OK(make_guarded(c, 9700, &g[0]));
  for (int i = 0; i < cublaslt_detail::heuristic_count(); ++i) {
    const Kernel* h = find_kernel(i == 0 ? "cublaslt" : "cublaslt_h" + std::to_string(i));
    ASSERT_NE(h, nullptr) << "answer " << i;
    if (h->can_implement(g[0].args().p).ok()) answers.push_back(h);
  }
  ASSERT_GE(answers.size(), 2u) << "the heuristic offers one answer here: nothing shares it";
  for (int t = 0; t < kThreads; ++t) {
    TGEMM_OK(make_guarded(c, 9700 + 17 * uint64_t(t), &g[size_t(t)]));
    k[size_t(t)] = answers[size_t(t) % answers.size()];
    expect_kernel_matches(*d, *k[size_t(t)], g[size_t(t)], false);
    if (::testing::Test::HasFailure()) return;
    alone[size_t(t)] = host_bytes(g[size_t(t)].yv, nullptr);
  }
  expect_per_thread_rounds(*d, kThreads, kRounds, [&](int t) {
    return PerThreadJob{k[size_t(t)], &g[size_t(t)], g[size_t(t)].yv, &alone[size_t(t)]};
  });
  std::printf("cuBLASLt heuristic kernels: %zu answers shared by %d threads, %d runs each\n", answers.size(), kThreads, kRounds);
}

// A cudaStreamPerThread workspace (34 MiB) belongs to its host thread: it is freed when the thread exits, so a thread
// pool's churn does not pile them up in a long-lived dispatcher. Three rounds of 4 threads, each thread's kernel
// result checked; while they run the dispatcher holds more, after every join exactly what it held before.
TEST(ConcurrencyGpu, PerThreadWorkspacesFreedWhenTheirThreadsExit) {
  std::unique_ptr<Dispatcher> d;
  TGEMM_OK(untabled_dispatcher(&d));
  const Kernel* k = find_kernel("cublaslt");
  ASSERT_NE(k, nullptr);
  Guarded g;
  TGEMM_OK(make_guarded({64, 1024, 1024, DType::bf16, DType::bf16, 1}, 9600, &g));
  ASSERT_GT(k->workspace_bytes(g.args().p), 0u) << "the kernel needs no workspace here";
  TGEMM_OK(d->run_kernel(*k, g.xv, g.wv, g.bias(), g.yv, nullptr));  // the legacy stream's workspace stays
  CUDA_OK(cudaDeviceSynchronize());
  const std::vector<unsigned char> alone = host_bytes(g.yv, nullptr);
  const size_t held = d->workspace_bytes();
  ASSERT_GT(held, 0u);
  constexpr int kThreads = 4;
  std::vector<bench::Guarded> ys(kThreads);
  std::vector<MatrixView> yv(kThreads);
  for (int t = 0; t < kThreads; ++t) TGEMM_OK(another_output(g.yv, &ys[size_t(t)], &yv[size_t(t)]));
  for (int round = 0; round < 3; ++round) {
    std::atomic<int> bad{0}, errors{0};
    std::atomic<size_t> most{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        bool same = false;
        if (!run_per_thread(*d, *k, g, yv[size_t(t)], alone, &same)) {
          ++errors;
          return;
        }
        bad += !same;
        size_t now = d->workspace_bytes(), seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
      });
    for (auto& th : threads) th.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(bad.load(), 0);
    EXPECT_GT(most.load(), held) << "round " << round << ": no thread's workspace was seen";
    EXPECT_EQ(d->workspace_bytes(), held) << "round " << round << ": the exited threads' workspaces are still held";
  }
  for (const bench::Guarded& y : ys) {
    int64_t before = 0, after = 0;
    TGEMM_OK(y.check_guards(&before, &after, nullptr));
    EXPECT_EQ(before + after, 0) << "bytes outside a thread's Y changed";
  }
  expect_guards_intact(g, "per-thread workspace inputs");
}

// (a') One kernel at a time: the same problem on 8 streams at once, on 8 host threads at once, and on one stream
// while other kernels (each kind EightThreadsEightStreamsEveryBackend mixes) run on 7 others. Run 26 found
// skinny_bf16_m16_ws_sk4_i64 wrong and not bit-identical in that test (most of its calls) and right when run alone;
// this one names the kernel and the company that breaks it. Every output must equal, bit for bit, that kernel's
// output on an idle GPU.
TEST(ConcurrencyGpu, PersistentKernelsBesideOtherKernels) {
  std::unique_ptr<Dispatcher> d;
  TGEMM_OK(untabled_dispatcher(&d));
  constexpr int kStreams = 8, kRounds = 30;
  // The company: cuBLASLt large, sm90 ping-pong, the register-ring skinny kernel with a cluster split, cuBLASLt small.
  const KernelCase company_jobs[] = {
      {"cublaslt", {4096, 4096, 4096, DType::bf16, DType::bf16, 0}},
      {"sm90_bf16_64x256x64_s5_c1x1_pp_i32", {2048, 2048, 1024, DType::bf16, DType::bf16, 0}},
      {"skinny_bf16_m16_skauto_i64", {8, 1048, 2048, DType::bf16, DType::bf16, 1}},
      {"cublaslt", {61, 520, 1288, DType::bf16, DType::bf16, 1}},
  };
  const KernelCase subjects[] = {
      {"skinny_bf16_m16_ws_sk4_i64", {1, 4096, 4096, DType::bf16, DType::bf16, 0}},
      {"skinny_bf16_m16_ws_skauto_i64", {16, 3584, 3584, DType::bf16, DType::bf16, 1}},
      {"skinny_bf16_m64_ws_skauto_i64", {64, 3584, 18944, DType::bf16, DType::bf16, 1}},  // wgmma, K split over blocks
      {"skinny_bf16_m16_tma_skauto_i64", {1, 4096, 4096, DType::bf16, DType::bf16, 0}},
      {"skinny_bf16_m16_skauto_i64", {1, 4096, 4096, DType::bf16, DType::bf16, 0}},
      {"sm90_bf16_64x256x64_s5_c1x1_pp_i64", {256, 4096, 1024, DType::bf16, DType::bf16, 1}},
  };
  std::vector<cudaStream_t> streams(kStreams);
  for (auto& s : streams) CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<std::unique_ptr<Guarded>> company;  // one problem per company stream, jobs in turn
  std::vector<const Kernel*> company_kernel;
  for (int s = 1; s < kStreams; ++s) {
    const KernelCase& j = company_jobs[size_t(s - 1) % std::size(company_jobs)];
    company_kernel.push_back(find_kernel(j.kernel));
    ASSERT_NE(company_kernel.back(), nullptr) << j.kernel;
    company.push_back(std::make_unique<Guarded>());
    TGEMM_OK(make_guarded(j.c, 9400 + uint64_t(s), company.back().get()));
  }
  int subjects_run = 0;
  for (const KernelCase& sub : subjects) {
    const Kernel* k = find_kernel(sub.kernel);
    if (k == nullptr) continue;  // not registered in this build
    Guarded g;
    TGEMM_OK(make_guarded(sub.c, 9410 + uint64_t(subjects_run), &g));
    if (!k->can_implement(g.args().p).ok()) continue;
    ++subjects_run;
    TGEMM_OK(d->run_kernel(*k, g.xv, g.wv, g.bias(), g.yv, nullptr));
    CUDA_OK(cudaDeviceSynchronize());
    bench::Compare cmp;
    TGEMM_OK(bench::compare(g.args(), bench::default_tol(sub.c.out), &cmp, nullptr));
    EXPECT_EQ(cmp.not_close + cmp.unwritten, 0) << sub.kernel << " alone: " << cmp.to_string();
    const std::vector<unsigned char> alone = host_bytes(g.yv, nullptr);
    std::vector<bench::Guarded> ys(kStreams);
    std::vector<MatrixView> yv(kStreams);
    for (int s = 0; s < kStreams; ++s) TGEMM_OK(another_output(g.yv, &ys[size_t(s)], &yv[size_t(s)]));
    const char* how[] = {"on 8 streams at once", "on 8 host threads at once", "beside other kernels on 7 streams"};
    for (int mode = 0; mode < 3; ++mode) {
      std::atomic<int> bad_runs{0}, runs{0};
      if (mode == 1) {
        std::vector<std::thread> threads;
        for (int t = 0; t < kStreams; ++t)
          threads.emplace_back([&, t] {
            for (int r = 0; r < kRounds; ++r) {
              (void)bench::poison(yv[size_t(t)], streams[size_t(t)]);
              if (!d->run_kernel(*k, g.xv, g.wv, g.bias(), yv[size_t(t)], streams[size_t(t)]).ok()) ++bad_runs;
              bad_runs += host_bytes(yv[size_t(t)], streams[size_t(t)]) != alone;
              ++runs;
            }
          });
        for (auto& th : threads) th.join();
      } else {
        const int mine = mode == 0 ? kStreams : 1;
        for (int r = 0; r < kRounds; ++r) {
          for (int s = 0; s < mine; ++s) TGEMM_OK(bench::poison(yv[size_t(s)], streams[size_t(s)]));
          for (int s = 0; s < kStreams; ++s) {
            if (s < mine) {
              TGEMM_OK(d->run_kernel(*k, g.xv, g.wv, g.bias(), yv[size_t(s)], streams[size_t(s)]));
            } else {
              const Guarded& c = *company[size_t(s - 1)];
              TGEMM_OK(d->run_kernel(*company_kernel[size_t(s - 1)], c.xv, c.wv, c.bias(), c.yv, streams[size_t(s)]));
            }
          }
          CUDA_OK(cudaDeviceSynchronize());
          for (int s = 0; s < mine; ++s, ++runs) bad_runs += host_bytes(yv[size_t(s)], nullptr) != alone;
        }
      }
      std::printf("contention %s %s: %d of %d outputs differ from the idle GPU's\n", sub.kernel, how[mode],
                  bad_runs.load(), runs.load());
      EXPECT_EQ(bad_runs.load(), 0) << sub.kernel << " " << how[mode] << ": outputs differ from the idle GPU's";
    }
    for (auto& y : ys) {
      int64_t before = -1, after = -1;
      TGEMM_OK(y.check_guards(&before, &after, nullptr));
      EXPECT_EQ(before + after, 0) << sub.kernel << ": bytes outside Y changed";
    }
    expect_guards_intact(g, sub.kernel);
  }
  EXPECT_GT(subjects_run, 0) << "none of the subject kernels is registered";
  for (auto& s : streams) cudaStreamDestroy(s);
}

// Tables are reloaded (with and without rows for the shapes served) while 4 threads call mm on a private dispatcher:
// every plan a call holds stays valid (Dispatcher::load_tables retires plans, never frees them under a caller), and
// every result stays correct.
TEST(ConcurrencyGpu, ReloadTablesWhileServing) {
  std::vector<std::unique_ptr<Shared>> shared;
  prepare(&shared, 9300);
  if (HasFailure()) return;
  std::unique_ptr<Dispatcher> d;
  TGEMM_OK(untabled_dispatcher(&d));
  // A table that sends every shape to cuBLASLt (alternating with no table: the heuristic's choice).
  const DeviceInfo dev = DeviceInfo::current();
  std::string table = testing::temp_path("reload_gpu.csv");
  {
    std::ofstream f(table);
    f << TunedTable::header() << "\n";
    for (auto& s : shared) {
      const Case& c = s->g.c;
      Shape sh{c.m, c.n, c.k, c.bias != 0, c.in, c.out, false, false};
      f << dev.arch << "," << dev.sm_count << "," << format_shape(sh) << ",cublaslt,0,1,1.0,cublaslt,0,1,1\n";
    }
  }
  TGEMM_OK(d->load_tables({table}));
  const int kThreads = 4;
  const double seconds = stress_seconds(5);
  std::vector<cudaStream_t> streams(kThreads);
  std::vector<std::vector<bench::Guarded>> ys(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    CUDA_OK(cudaStreamCreateWithFlags(&streams[size_t(t)], cudaStreamNonBlocking));
    for (auto& s : shared) {
      bench::Guarded y;
      TGEMM_OK(bench::Guarded::make(span_bytes(s->g.yv), 4096, 4096, &y));
      ys[size_t(t)].push_back(std::move(y));
    }
  }
  std::mutex err_mu;
  std::vector<std::string> errors;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> calls{0}, reloads{0};
  std::mutex done_mu;
  std::condition_variable done_cv;
  int done = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      size_t i = size_t(t);
      while (!stop.load()) {
        const Shared& s = *shared[i % shared.size()];
        MatrixView yv = s.g.yv;
        yv.data = ys[size_t(t)][i % shared.size()].data();
        cudaStream_t st = streams[size_t(t)];
        Status r = bench::poison(yv, st);
        if (r.ok()) r = d->mm(s.g.xv, s.g.wv, s.g.bias(), yv, st);
        GemmArgs a;
        (void)make_problem(s.g.xv, s.g.wv, s.g.bias(), yv, &a.p);
        a.x = s.g.xv.data, a.w = s.g.wv.data, a.bias = s.g.c.bias ? s.g.bv.data : nullptr, a.y = yv.data;
        bench::Compare cmp;
        if (r.ok()) r = bench::compare(a, bench::default_tol(s.g.c.out), &cmp, st);
        if (!r.ok() || cmp.unwritten || cmp.not_close) {
          std::lock_guard<std::mutex> lock(err_mu);
          if (errors.size() < 20) errors.push_back(s.g.c.str() + ": " + (r.ok() ? cmp.to_string() : r.to_string()));
        }
        ++calls;
        ++i;
      }
      cudaStreamSynchronize(streams[size_t(t)]);
      std::lock_guard<std::mutex> lock(done_mu);
      ++done;
      done_cv.notify_all();
    });
  threads.emplace_back([&] {
    const auto until = Clock::now() + std::chrono::milliseconds(int64_t(seconds * 1000));
    while (Clock::now() < until) {
      Status s = d->load_tables(reloads.load() % 2 ? std::vector<std::string>{} : std::vector<std::string>{table});
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(err_mu);
        errors.push_back("load_tables: " + s.to_string());
      }
      ++reloads;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    stop.store(true);
    std::lock_guard<std::mutex> lock(done_mu);
    ++done;
    done_cv.notify_all();
  });
  watchdog(done_mu, done_cv, done, kThreads + 1, std::chrono::seconds(int64_t(seconds) + 300),
           [&] { return "  " + std::to_string(calls.load()) + " calls, " + std::to_string(reloads.load()) + " reloads\n"; });
  for (auto& th : threads) th.join();
  for (const std::string& e : errors) ADD_FAILURE() << e;
  EXPECT_GT(reloads.load(), 10);
  EXPECT_GT(calls.load(), int64_t(kThreads));
  std::printf("%lld checked mm calls during %lld table reloads\n", (long long)calls.load(), (long long)reloads.load());
  for (int t = 0; t < kThreads; ++t) {
    for (auto& y : ys[size_t(t)]) {
      int64_t before = -1, after = -1;
      TGEMM_OK(y.check_guards(&before, &after, nullptr));
      EXPECT_EQ(before + after, 0) << "bytes outside Y changed";
    }
    cudaStreamDestroy(streams[size_t(t)]);
  }
  std::filesystem::remove(table);
}

// ---- (b) leaks ---------------------------------------------------------------------------------------------

// Resident set size of this process, bytes (/proc/self/statm: size, resident, ... in pages).
int64_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  int64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * int64_t(sysconf(_SC_PAGESIZE));
}

int64_t device_free_bytes() {
  size_t free = 0, total = 0;
  cudaMemGetInfo(&free, &total);
  return int64_t(free);
}

// Everything allocated before the measurement is settled: queued work done, stream-ordered pools (the test
// helpers' cudaMallocAsync) trimmed.
void settle() {
  cudaDeviceSynchronize();
  int dev = 0;
  cudaGetDevice(&dev);
  cudaMemPool_t pool;
  if (cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess) cudaMemPoolTrimTo(pool, 0);
  cudaGetLastError();
}

// Tolerances. Device memory is read device-wide by cudaMemGetInfo, at the driver's 2 MiB page granularity: 4 MiB
// allows two pages of unrelated noise (another process, the driver's own bookkeeping) and still catches a leak of
// 420 bytes per call over 10,000 calls (or 4 KiB per dispatcher over 1,000). Host RSS moves with the allocator's
// arenas and the pages the loop touches for the first time: 8 MiB still catches 840 bytes per call (8 KiB per
// dispatcher). Both are measured after a warm-up of the same calls, so one-time costs (module loading, cuBLASLt's
// plan for a shape, the plan cache, a stream's workspace) are outside the window.
constexpr int64_t kDeviceTolerance = int64_t(4) << 20;
constexpr int64_t kHostTolerance = int64_t(8) << 20;

// Device free memory and host RSS at construction (after settling); expect_returned() checks both came back.
struct MemoryMark {
  int64_t free0, rss0;
  MemoryMark() {
    settle();
    free0 = device_free_bytes(), rss0 = rss_bytes();
  }
  void expect_returned(const std::string& what) const {
    settle();
    const int64_t free1 = device_free_bytes(), rss1 = rss_bytes();
    std::printf("%s: device free %+.3f MiB, host RSS %+.3f MiB\n", what.c_str(), double(free1 - free0) / (1 << 20),
                double(rss1 - rss0) / (1 << 20));
    EXPECT_LE(free0 - free1, kDeviceTolerance) << what << ": device memory not returned";
    EXPECT_LE(rss1 - rss0, kHostTolerance) << what << ": host memory not returned";
  }
};

// The first prepared shape of each backend.
std::vector<Shared*> first_of_each_backend(const std::vector<std::unique_ptr<Shared>>& shared) {
  std::vector<Shared*> picked;
  std::set<Backend> seen;
  for (auto& s : shared)
    if (seen.insert(s->backend).second) picked.push_back(s.get());
  return picked;
}

// 10,000 mm calls over one shape per backend (and K = 0, which only fills Y with the bias): device free memory and
// host RSS come back to where they were after the warm-up; the plan cache does not grow.
TEST(LeaksGpu, TenThousandMmCalls) {
  std::vector<std::unique_ptr<Shared>> shared;
  prepare(&shared, 9500);
  if (HasFailure()) return;
  std::vector<Shared*> picked = first_of_each_backend(shared);
  Shared kzero;
  TGEMM_OK(make_guarded(Case{64, 256, 0, DType::bf16, DType::bf16, 1}, 9600, &kzero.g));
  picked.push_back(&kzero);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  auto call = [&](const Shared& sh) { return mm(sh.g.xv, sh.g.wv, sh.g.bias(), sh.g.yv, s); };
  for (int rep = 0; rep < 50; ++rep)
    for (Shared* sh : picked) TGEMM_OK(call(*sh));
  const MemoryMark mark;
  const size_t plans0 = Dispatcher::global().plan_cache_size();
  const int kCalls = 10000;
  for (int i = 0; i < kCalls; ++i) {
    TGEMM_OK(call(*picked[size_t(i) % picked.size()]));
    if (i % 1000 == 999) CUDA_OK(cudaStreamSynchronize(s));
  }
  mark.expect_returned(std::to_string(kCalls) + " mm calls");
  EXPECT_EQ(Dispatcher::global().plan_cache_size(), plans0) << "the plan cache grew on repeated shapes";
  // The calls did the work: the last result of each shape is right (K = 0: Y = bias, guards only).
  for (Shared* sh : picked) {
    expect_guards_intact(sh->g, "leak loop");
    if (sh->g.c.k == 0) continue;
    bench::Compare cmp;
    TGEMM_OK(bench::compare(sh->g.args(), bench::default_tol(sh->g.c.out), &cmp, s));
    EXPECT_EQ(cmp.unwritten + cmp.not_close, 0) << sh->g.c.str() << ": " << cmp.to_string();
  }
  cudaStreamDestroy(s);
}

// 1,000 dispatchers created (no tables), used for one mm each (the backends in turn) and destroyed: their plans and
// stream workspaces are freed with them.
TEST(LeaksGpu, ThousandDispatcherLifetimes) {
  std::vector<std::unique_ptr<Shared>> shared;
  prepare(&shared, 9700);
  if (HasFailure()) return;
  const std::vector<Shared*> picked = first_of_each_backend(shared);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  auto cycle = [&](int i) {
    std::unique_ptr<Dispatcher> d;
    Status st = untabled_dispatcher(&d);
    if (!st.ok()) return st;
    const Shared& sh = *picked[size_t(i) % picked.size()];
    st = d->mm(sh.g.xv, sh.g.wv, sh.g.bias(), sh.g.yv, s);
    if (st.ok() && cudaStreamSynchronize(s) != cudaSuccess) st = {StatusCode::cuda_error, "sync"};
    return st;  // d is destroyed here, with its workspaces
  };
  for (int i = 0; i < 20; ++i) TGEMM_OK(cycle(i));
  const MemoryMark mark;
  const int kCycles = 1000;
  for (int i = 0; i < kCycles; ++i) TGEMM_OK(cycle(i));
  mark.expect_returned(std::to_string(kCycles) + " dispatcher lifetimes");
  for (Shared* sh : picked) {
    bench::Compare cmp;
    TGEMM_OK(bench::compare(sh->g.args(), bench::default_tol(sh->g.c.out), &cmp, s));
    EXPECT_EQ(cmp.unwritten + cmp.not_close, 0) << sh->g.c.str() << ": " << cmp.to_string();
  }
  cudaStreamDestroy(s);
}

// ---- (c) CUDA graphs ---------------------------------------------------------------------------------------

// Captures `enqueue` on a fresh stream after one warm-up call, checks that capture enqueued work instead of running
// it (Y still poisoned afterwards, the graph has nodes), replays it 3 times, and checks the result and the guards.
void capture_and_check(Guarded& g, const std::string& what, const std::function<Status(cudaStream_t)>& enqueue) {
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  TGEMM_OK(enqueue(s));  // warm-up: plan, cuBLASLt's heuristic, the stream's workspace
  CUDA_OK(cudaStreamSynchronize(s));
  TGEMM_OK(bench::poison(g.yv, s));
  CUDA_OK(cudaStreamSynchronize(s));
  cudaGraph_t graph = nullptr;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  Status st = enqueue(s);
  cudaError_t end = cudaStreamEndCapture(s, &graph);
  TGEMM_OK(st);
  CUDA_OK(end);
  size_t nodes = 0;
  CUDA_OK(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_GT(nodes, 0u) << what << ": nothing was captured";
  int64_t nan_rows = 0;
  TGEMM_OK(bench::count_nan_rows(g.yv, &nan_rows, s));
  EXPECT_EQ(nan_rows, g.c.m) << what << ": Y was written during capture (the work ran instead of being recorded)";
  cudaGraphExec_t exec = nullptr;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 3; ++i) CUDA_OK(cudaGraphLaunch(exec, s));
  CUDA_OK(cudaStreamSynchronize(s));
  bench::Compare cmp;
  TGEMM_OK(bench::compare(g.args(), bench::default_tol(g.c.out), &cmp, s));
  EXPECT_EQ(cmp.unwritten, 0) << what << " " << g.c.str() << ": " << cmp.to_string();
  EXPECT_EQ(cmp.not_close, 0) << what << " " << g.c.str() << ": " << cmp.to_string();
  expect_guards_intact(g, what);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

// mm, captured in a graph, on one shape routed to each backend.
TEST(GraphsGpu, MmOnEveryBackend) {
  std::vector<std::unique_ptr<Shared>> shared;
  prepare(&shared, 9900);
  if (HasFailure()) return;
  std::set<Backend> done;
  for (auto& sh : shared) {
    if (!done.insert(sh->backend).second) continue;
    Guarded& g = sh->g;
    capture_and_check(g, "mm in a graph via " + sh->kernel, [&](cudaStream_t s) { return mm(g.xv, g.wv, g.bias(), g.yv, s); });
    std::printf("graph: mm %s -> %s ok\n", g.c.str().c_str(), sh->kernel.c_str());
  }
}

// Dispatcher::run_kernel with one representative kernel of each backend (the first registered one that takes a
// shape meant for that backend), captured in a graph.
TEST(GraphsGpu, RunKernelOneOfEachBackend) {
  std::unique_ptr<Dispatcher> d;
  TGEMM_OK(untabled_dispatcher(&d));
  const std::map<Backend, std::vector<Case>> cases = {
      {Backend::skinny, {{8, 1048, 2048, DType::bf16, DType::bf16, 1}, {5, 100, 77, DType::fp16, DType::fp32, 2}}},
      {Backend::sm90, {{1024, 1536, 512, DType::bf16, DType::bf16, 1}, {512, 512, 256, DType::fp16, DType::fp16, 0}}},
      {Backend::cublaslt, {{300, 520, 1280, DType::bf16, DType::bf16, 1, 1, 0, 0}, {128, 256, 64, DType::bf16, DType::fp32, 1}}},
  };
  int captured = 0;
  uint64_t seed = 10100;
  for (Backend b : registered_backends()) {
    auto it = cases.find(b);
    if (it == cases.end()) continue;
    const Kernel* chosen = nullptr;
    for (const Case& c : it->second) {
      Guarded g;
      TGEMM_OK(make_guarded(c, seed += 13, &g));
      for (const Kernel* k : kernels())
        if (k->backend() == b && k->can_implement(g.args().p).ok()) {
          chosen = k;
          break;
        }
      if (!chosen) continue;
      capture_and_check(g, "run_kernel in a graph: " + chosen->name(),
                        [&](cudaStream_t s) { return d->run_kernel(*chosen, g.xv, g.wv, g.bias(), g.yv, s); });
      std::printf("graph: run_kernel %s on %s ok\n", chosen->name().c_str(), c.str().c_str());
      ++captured;
      break;
    }
    EXPECT_NE(chosen, nullptr) << "no " << backend_name(b) << " kernel takes any of its test shapes";
  }
  EXPECT_GT(captured, 0);
}

}  // namespace
}  // namespace tgemm::testing
