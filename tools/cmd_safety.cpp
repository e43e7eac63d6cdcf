// tgemm repro, tgemm check: the seed incident on this GPU, and the boundary sweep of every declared limit.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bench/safety.h"
#include "cli.h"
#include "registry/registry.h"

namespace tgemm::cli {

namespace {

bool have_gpu(const char* cmd) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::fprintf(stderr, "tgemm %s: no CUDA device\n", cmd);
    return false;
  }
  return true;
}

}  // namespace

int cmd_repro(const std::vector<std::string>& argv) {
  Args a(argv, {}, {"--kernel", "--m"});
  const Kernel* k = a.has("--kernel") ? find_kernel(a.str("--kernel")) : bench::repro_default_kernel();
  if (a.has("--kernel") && (!k || k->limits().y_index_bits != 32)) a.fail("--kernel: '" + a.str("--kernel") + "' is not a registered int32-offset kernel");
  if (a.ok() && !k) a.fail("this build has no int32-offset sm90 kernel to reproduce the incident with");
  std::vector<int64_t> ms = {340000, 360000, 768000};
  if (a.has("--m")) ms = {a.int_opt("--m", 0, 1, int64_t(1) << 31)};
  if (a.ok() && !a.positional().empty()) a.fail("unexpected argument '" + a.positional()[0] + "'");
  if (!a.ok()) {
    std::fprintf(stderr, "tgemm repro: %s\n", a.error().c_str());
    return 2;
  }
  if (!have_gpu("repro")) return 1;
  DeviceInfo dev = DeviceInfo::current();
  // The seed's tuned table: the M=8192 row names the int32 kernel; padded M maps the big shapes onto it.
  std::string table = (std::filesystem::temp_directory_path() / "tgemm_repro_table.csv").string();
  std::ofstream(table) << TunedTable::header() << "\n" << dev.arch << "," << dev.sm_count
                       << ",8192,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,sm90,0,1,100.0," << k->name() << ",0.0,0,0\n";
  std::printf("seed incident on this GPU: N=6144 K=1280 bf16 with bias; tuned table row M=8192 -> %s (int32 Y offsets)\n", k->name().c_str());
  std::printf("%7s %-15s | %-46s | %-34s %8s %7s %9s | %s\n", "M", "M*N vs 2^31", "int32 kernel, limit check bypassed", "tgemm plan", "TFLOP/s",
              "x cuBLAS", "rel_err", "cuBLASLt TFLOP/s");
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  int failures = 0;
  for (int64_t m : ms) {
    bench::ReproRow r;
    Status s = bench::run_repro_row(*k, table, m, stream, &r);
    if (!s.ok()) {
      std::printf("%7lld: %s\n", (long long)m, s.to_string().c_str());
      ++failures;
      continue;
    }
    char bypass[128];
    if (!r.above)
      std::snprintf(bypass, sizeof bypass, "%.1f TFLOP/s, %s", r.bypass_tflops,
                    r.bytes_outside == 0 && r.rows_unwritten == 0 && r.bypass_cmp.not_close == 0 ? "clean" : "CORRUPT");
    else
      std::snprintf(bypass, sizeof bypass, "%lld bytes written outside Y, %lld rows unwritten", (long long)r.bytes_outside,
                    (long long)r.rows_unwritten);
    bool plan_ok = r.plan_guard_bytes == 0 && r.plan_rows_unwritten == 0 && r.plan_cmp.not_close == 0 && r.plan_cmp.unwritten == 0;
    bool detected = !r.above || r.bytes_outside > 0 || r.rows_unwritten > 0 || r.bypass_cmp.not_close > 0;
    if (!plan_ok || !detected) ++failures;
    std::printf("%7lld %-15s | %-46s | %-34s %8.1f %6.3fx %9.2e | %.1f%s\n", (long long)m, r.above ? ">= 2^31 (above)" : "< 2^31 (below)", bypass,
                r.plan.c_str(), r.plan_tflops, r.plan_x_cublaslt, r.plan_cmp.rel_l2(), r.cublaslt_tflops,
                plan_ok ? "" : "  FAILED: plan result or guards wrong");
    std::fflush(stdout);
  }
  cudaStreamDestroy(stream);
  std::filesystem::remove(table);
  std::printf("%s\n", failures ? "repro: FAILED" : "before: memory corrupted above 2^31 outputs; after: every plan correct, no byte outside Y");
  return failures ? 1 : 0;
}

int cmd_check(const std::vector<std::string>& argv) {
  Args a(argv, {"--quick"}, {"--kernel"});
  if (a.ok() && !a.positional().empty()) a.fail("unexpected argument '" + a.positional()[0] + "'");
  if (a.ok() && a.has("--kernel") && !find_kernel(a.str("--kernel"))) a.fail("--kernel: unknown kernel '" + a.str("--kernel") + "'");
  if (!a.ok()) {
    std::fprintf(stderr, "tgemm check: %s\n", a.error().c_str());
    return 2;
  }
  if (!have_gpu("check")) return 1;
  std::unique_ptr<Dispatcher> d;
  DispatcherOptions opts;
  opts.load_default_tables = false;
  if (Status s = Dispatcher::create(opts, &d); !s.ok()) {
    std::fprintf(stderr, "tgemm check: %s\n", s.to_string().c_str());
    return 1;
  }
  std::vector<const Kernel*> ks;
  for (const Kernel* k : kernels()) {
    if (k->backend() == Backend::reference) continue;
    if (a.has("--kernel") && k->name() != a.str("--kernel")) continue;
    ks.push_back(k);
  }
  if (a.flag("--quick")) {
    // One kernel of each limit shape: an int32 and an int64 sm90, the largest skinny tile, cuBLASLt.
    std::vector<const Kernel*> q;
    auto pick = [&](auto pred) {
      for (const Kernel* k : ks)
        if (pred(k)) return q.push_back(k);
    };
    pick([](const Kernel* k) { return k->backend() == Backend::sm90 && k->limits().y_index_bits == 32; });
    pick([](const Kernel* k) { return k->backend() == Backend::sm90 && k->limits().y_index_bits == 64; });
    pick([](const Kernel* k) { return k->backend() == Backend::skinny && k->limits().ptr_align == 16; });
    pick([](const Kernel* k) { return k->backend() == Backend::cublaslt; });
    ks = q;
  }
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  auto t0 = std::chrono::steady_clock::now();
  std::printf("%-36s %-58s %-7s %9s %-36s %6s %s\n", "kernel", "limit", "side", "M", "plan", "pieces", "result");
  int total = 0, failed = 0;
  for (const Kernel* k : ks)
    for (const bench::SweepCase& c : bench::sweep_cases(*k)) {
      bench::SweepResult r;
      Status s = bench::run_sweep_case(*d, c, stream, &r);
      ++total;
      if (!s.ok()) r.error = s.to_string();
      bool ok = s.ok() && r.ok;
      if (!ok) ++failed;
      std::printf("%-36s %-58s %-7s %9lld %-36s %3zu/%-2zu %s\n", k->name().c_str(), c.limit.c_str(), c.inside ? "inside" : "outside",
                  (long long)c.shape.m, r.plan.c_str(), r.pieces, c.expect_pieces,
                  !ok ? ("FAILED: " + r.error).c_str() : r.refused.empty() ? "ok" : ("ok, declined: " + r.refused).c_str());
      std::fflush(stdout);
      if (!s.ok() && s.code() == StatusCode::cuda_error) {
        std::printf("check: CUDA error, stopping: %s\n", s.to_string().c_str());
        return 1;
      }
    }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("check: %d cases, %d failed, %.0f s (no byte outside any operand changed, every row written, results match the reference, plans as the limits predict)\n",
              total, failed, secs);
  std::printf("%d passed, %d failed\n", total - failed, failed);
  cudaStreamDestroy(stream);
  return failed ? 1 : 0;
}

}  // namespace tgemm::cli
