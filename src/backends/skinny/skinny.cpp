// skinny backend: the Kernel objects, their registration and the untuned default.
//
// One compiled kernel per (input dtype, M tile, 16-byte or element loads) serves several registered kernels
// that differ only in the split-K they launch with (a launch parameter), so the tuner can pick the split.
#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backends/skinny/skinny_config.h"
#include "registry/registry.h"

namespace tgemm::skinny {

// In skinny_bf16.cu / skinny_fp16.cu: the __global__ function for (max_m, vec), or null.
const void* kernel_bf16(int max_m, bool vec);
const void* kernel_fp16(int max_m, bool vec);

namespace {

constexpr int kMTiles[] = {8, 16, 32, 64};
constexpr int kFixedSplits[] = {1, 2, 4, 8, 16, 32};
constexpr int kScalarMTile = 64;

int device_sm_count() {
  static std::array<std::atomic<int>, 64> cache{};  // per device ordinal; 0 = not read yet
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 132;
  if (dev >= 0 && dev < int(cache.size())) {
    const int v = cache[size_t(dev)].load(std::memory_order_relaxed);
    if (v > 0) return v;
  }
  int v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || v <= 0) {
    (void)cudaGetLastError();  // don't leave the query's error for the launch check to find
    return 132;
  }
  if (dev >= 0 && dev < int(cache.size())) cache[size_t(dev)].store(v, std::memory_order_relaxed);
  return v;
}

// TGEMM_SKINNY_PDL=0 launches without the programmatic-dependency attribute (for A/B measurements).
bool pdl_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("TGEMM_SKINNY_PDL");
    return !(e && e[0] == '0');
  }();
  return on;
}

class SkinnyKernel final : public Kernel {
 public:
  SkinnyKernel(const Config& cfg, const void* fn) : cfg_(cfg), name_(cfg.name()), limits_(cfg.limits()), fn_(fn) {}

  const std::string& name() const override { return name_; }
  Backend backend() const override { return Backend::skinny; }
  const Limits& limits() const override { return limits_; }
  bool deterministic() const override { return true; }  // fixed-order reductions, no atomics
  size_t workspace_bytes(const Problem&) const override { return 0; }

  // The launch this kernel makes for `p` on a GPU with `sms` SMs (exposed for `explain` and tests).
  LaunchShape shape(const Problem& p, int sms) const {
    int split = cfg_.split_k;
    if (split <= 0) split = auto_split(p.m, p.n, p.k, cfg_.max_wk(), sms, kBlocksPerSm, cfg_.depth());
    return launch_shape(p.n, p.k, split, cfg_.max_wk());
  }

  Status run(const GemmArgs& a, void* /*workspace*/, size_t /*workspace_bytes*/,
             cudaStream_t stream) const override {
    const Problem& p = a.p;
    if (p.m <= 0 || p.n <= 0) return Status::Ok();  // nothing to write
    if (p.k <= 0 || p.m > cfg_.max_m)
      return Status(StatusCode::invalid_argument,
                    name_ + ": problem outside the kernel's limits (K must be > 0, M <= " +
                        std::to_string(cfg_.max_m) + ")");
    if (fn_ == nullptr) return Status(StatusCode::internal, name_ + ": kernel not compiled into this build");

    const LaunchShape sh = shape(p, device_sm_count());

    Params prm;
    prm.x = a.x;
    prm.w = a.w;
    prm.bias = p.has_bias ? a.bias : nullptr;
    prm.y = a.y;
    prm.ldx = p.ldx;
    prm.ldw = p.ldw;
    prm.ldy = p.ldy;
    prm.n = p.n;
    prm.k = p.k;
    prm.k_steps = sh.k_steps;
    prm.sps = sh.sps;
    prm.m = int(p.m);
    prm.wk_log2 = sh.wk_log2;
    prm.s = sh.s;
    prm.out_dtype = int(p.out_dtype);
    prm.bias_kind = (p.has_bias && a.bias != nullptr) ? (p.bias_dtype == DType::fp32 ? 2 : 1) : 0;

    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(unsigned(sh.blocks), 1, 1);
    lc.blockDim = dim3(kThreads, 1, 1);
    lc.dynamicSmemBytes = 0;
    lc.stream = stream;
    cudaLaunchAttribute attr[2];
    unsigned na = 0;
    if (sh.s > 1) {
      attr[na].id = cudaLaunchAttributeClusterDimension;
      attr[na].val.clusterDim.x = unsigned(sh.s);
      attr[na].val.clusterDim.y = 1;
      attr[na].val.clusterDim.z = 1;
      ++na;
    }
    // Programmatic dependent launch: the kernel warms L2 with its first W bytes and lets the next grid start
    // before it waits on the previous one (griddepcontrol in skinny_kernel.cuh); X and Y wait as before.
    if (pdl_enabled()) {
      attr[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[na].val.programmaticStreamSerializationAllowed = 1;
      ++na;
    }
    lc.attrs = na ? attr : nullptr;
    lc.numAttrs = na;
    void* args[] = {&prm};
    cudaError_t e = cudaLaunchKernelExC(&lc, fn_, args);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess)
      return Status(StatusCode::cuda_error, name_ + ": launch of " + std::to_string(sh.blocks) + " blocks (cluster " +
                                                std::to_string(sh.s) + ") failed: " + cudaGetErrorName(e) + ": " +
                                                cudaGetErrorString(e));
    return Status::Ok();
  }

 private:
  Config cfg_;
  std::string name_;
  Limits limits_;
  const void* fn_;
};

int mtile_index(int max_m) {
  for (int i = 0; i < 4; ++i)
    if (kMTiles[i] == max_m) return i;
  return -1;
}

}  // namespace
}  // namespace tgemm::skinny

namespace tgemm {

void add_skinny_kernels(BackendKernels& out) {
  using skinny::Config;
  using skinny::SkinnyKernel;
  // auto_vec[dtype][mtile] and scalar[dtype]: what the default hands out.
  struct Defaults {
    const Kernel* auto_vec[2][4] = {};
    const Kernel* scalar[2] = {};
  };
  auto defs = std::make_shared<Defaults>();

  const DType dtypes[2] = {DType::bf16, DType::fp16};
  for (int d = 0; d < 2; ++d) {
    auto fn_of = [&](int max_m, bool vec) {
      return dtypes[d] == DType::bf16 ? skinny::kernel_bf16(max_m, vec) : skinny::kernel_fp16(max_m, vec);
    };
    for (int mt : skinny::kMTiles) {
      const void* fn = fn_of(mt, true);
      Config c;
      c.in = dtypes[d];
      c.max_m = mt;
      c.vec = true;
      c.split_k = 0;
      auto k = std::make_unique<SkinnyKernel>(c, fn);
      defs->auto_vec[d][skinny::mtile_index(mt)] = k.get();
      out.kernels.push_back(std::move(k));
      for (int sk : skinny::kFixedSplits) {
        if (sk > c.max_split()) continue;
        c.split_k = sk;
        out.kernels.push_back(std::make_unique<SkinnyKernel>(c, fn));
      }
    }
    Config c;
    c.in = dtypes[d];
    c.max_m = skinny::kScalarMTile;
    c.vec = false;
    c.split_k = 0;
    auto k = std::make_unique<SkinnyKernel>(c, fn_of(c.max_m, false));
    defs->scalar[d] = k.get();
    out.kernels.push_back(std::move(k));
  }

  // Untuned default for M <= 64: the 16-byte kernel with the smallest M tile (at least 16) that holds M (split
  // chosen per problem), then the element-load kernel for what the 16-byte one cannot address (odd K / ld, unaligned).
  out.defaults = [defs](const Problem& p) -> std::vector<const Kernel*> {
    if (p.m < 1 || p.m > 64 || p.n < 1 || p.k < 1) return {};
    int d = -1;
    if (p.in_dtype == DType::bf16) d = 0;
    if (p.in_dtype == DType::fp16) d = 1;
    if (d < 0) return {};
    // M <= 8 also takes the m16 tile: its shallower load batches (depth 4 against 8) streamed W faster on the
    // H200 at every decode shape measured under graph replay (issue 4); rows past M add no W traffic.
    const int t = p.m <= 16 ? 1 : p.m <= 32 ? 2 : 3;
    std::vector<const Kernel*> v;
    if (defs->auto_vec[d][t]) v.push_back(defs->auto_vec[d][t]);
    if (defs->scalar[d]) v.push_back(defs->scalar[d]);
    return v;
  };
}

}  // namespace tgemm
