// The seed incident: the bypassed int32 kernel above 2^31 outputs is caught by the guards (below: clean), the
// dispatcher's plan for the same problem is correct; and a reduced boundary sweep of the declared limits.
#include <filesystem>
#include <fstream>

#include "common/temp_path.h"
#include "bench/safety.h"
#include "gpu_util.h"
#include "registry/registry.h"

namespace tgemm::testing {
namespace {

std::string seed_table(const Kernel& k) {
  DeviceInfo dev = DeviceInfo::current();
  std::string path = testing::temp_path("test_seed_table.csv");
  std::ofstream(path) << TunedTable::header() << "\n" << dev.arch << "," << dev.sm_count
                      << ",8192,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,sm90,0,1,100.0," << k.name() << ",0,0,0\n";
  return path;
}

TEST(Repro, BypassedInt32KernelDetectedAboveCleanBelow) {
  const Kernel* k = bench::repro_default_kernel();
  if (!k) GTEST_SKIP() << "no int32-offset sm90 kernel in this build";
  std::string table = seed_table(*k);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  bench::ReproRow below, above;
  TGEMM_OK(bench::run_repro_row(*k, table, 340000, s, &below));
  EXPECT_FALSE(below.above);
  EXPECT_EQ(below.bytes_outside, 0);
  EXPECT_EQ(below.rows_unwritten, 0);
  EXPECT_EQ(below.bypass_cmp.not_close, 0) << below.bypass_cmp.to_string();
  EXPECT_EQ(below.pieces, 1u) << below.plan;
  TGEMM_OK(bench::run_repro_row(*k, table, 360000, s, &above));
  EXPECT_TRUE(above.above);
  EXPECT_GT(above.bytes_outside, 0) << "the wrapped int32 offsets write before Y";
  EXPECT_GT(above.rows_unwritten, 0);
  std::printf("repro M=360000: bypassed %s wrote %lld bytes outside Y, left %lld rows unwritten; plan %s: %s\n", k->name().c_str(),
              (long long)above.bytes_outside, (long long)above.rows_unwritten, above.plan.c_str(), above.plan_cmp.to_string().c_str());
  EXPECT_EQ(above.plan_guard_bytes, 0);
  EXPECT_EQ(above.plan_rows_unwritten, 0);
  EXPECT_EQ(above.plan_cmp.not_close, 0) << above.plan_cmp.to_string();
  EXPECT_EQ(above.plan_cmp.unwritten, 0);
  EXPECT_EQ(above.pieces, 2u) << above.plan;
  cudaStreamDestroy(s);
  std::filesystem::remove(table);
}

TEST(Check, ReducedBoundarySweep) {
  std::unique_ptr<Dispatcher> d;
  TGEMM_OK(untabled_dispatcher(&d));
  std::vector<const Kernel*> ks;
  auto pick = [&](auto pred) {
    for (const Kernel* k : kernels())
      if (pred(k)) return ks.push_back(k);
  };
  pick([](const Kernel* k) { return k->backend() == Backend::sm90 && k->limits().y_index_bits == 32; });
  pick([](const Kernel* k) { return k->backend() == Backend::sm90 && k->limits().y_index_bits == 64; });
  // The TMA-store epilogue: Y through a tensor map (int32 coordinates) instead of offsets formed in the kernel.
  pick([](const Kernel* k) { return k->backend() == Backend::sm90 && k->name().find("_etma_") != std::string::npos; });
  pick([](const Kernel* k) { return k->backend() == Backend::skinny; });
  pick([](const Kernel* k) { return k->backend() == Backend::cublaslt; });
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int n = 0;
  for (const Kernel* k : ks)
    for (const bench::SweepCase& c : bench::sweep_cases(*k)) {
      bench::SweepResult r;
      TGEMM_OK(bench::run_sweep_case(*d, c, s, &r));
      EXPECT_TRUE(r.ok) << k->name() << " " << c.limit << (c.inside ? " inside" : " outside") << " M=" << c.shape.m << ": " << r.error;
      ++n;
    }
  EXPECT_GT(n, 0);
  cudaStreamDestroy(s);
}

}  // namespace
}  // namespace tgemm::testing
