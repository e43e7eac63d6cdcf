// Host side of the small-M skeleton (sm90_swapab.cuh): the split choice, the launch, the Kernel wrapper and its
// registered instantiations.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "backends/sm90/sm90_launch.cuh"
#include "backends/sm90/sm90_swapab.cuh"
#include "backends/sm90/sm90_swapab_plan.h"
#include "core/env.h"
#include "core/tensor_map.h"

namespace tgemm::sm90 {

namespace {

// Per device and instantiation: the shared-memory opt-in, and how many CTAs run at once unclustered and in
// clusters of 2 (the automatic split choices; sm90_swapab_plan.h).
struct SwapAbDevice {
  cudaError_t err = cudaSuccess;
  std::array<int, 2> concurrent{};  // CTAs resident at once with clusters of 1, 2
};

template <class T>
const SwapAbDevice* device_state(int dev) {
  static PerDevice<SwapAbDevice> states;
  return &states.get(dev, [](SwapAbDevice& st) {
    const void* fn = reinterpret_cast<const void*>(swapab_kernel<T>);
    st.err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
    for (int i = 0; i < 2 && st.err == cudaSuccess; ++i) {
      const int cs = 1 << i;
      int clusters = 0;
      st.err = max_active_clusters(fn, T::kThreads, T::kSmemBytes, cs, &clusters);
      st.concurrent[size_t(i)] = clusters * cs;
    }
    if (st.err == cudaSuccess && st.concurrent[0] < 1) st.err = cudaErrorInvalidConfiguration;
  });
}

template <class T>
class SwapAbKernel final : public Sm90KernelBase {
 public:
  SwapAbKernel() : Sm90KernelBase(T::kConfig, T::kMT, T::kWRows) {
    lim_.max_m = int64_t(65535) * T::kMT;  // M tiles are gridDim.y
  }
  Verdict can_implement(const Problem& p) const override {
    Verdict v = check_common(p);
    if (!v.ok()) return v;
    const uint64_t ctas = ((uint64_t(p.n) + T::kWRows - 1) / T::kWRows) * T::kMaxSplits;
    if (ctas > uint64_t(INT32_MAX))
      return {Verdict::Kind::addressing, "N / " + std::to_string(T::kWRows) + " x " + std::to_string(T::kMaxSplits) +
                                             " splits > 2^31-1 CTAs (gridDim.x)"};
    return v;
  }
  // Every tile split across a cluster (split_tiles is always kAllTiles here).
  SplitPlan split_plan(const Problem& p) const override {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return {};
    // Development: TGEMM_SWAPAB_SPLITS=s forces the split count (the K-scaling measurements of session 5).
    static const int forced = env_int("TGEMM_SWAPAB_SPLITS", 0);
    if (forced > 0) return {uint32_t(forced)};
    const SwapAbDevice* st = device_state<T>(dev);
    return {st->err == cudaSuccess ? choose_swapab_splits(p, T::kMT, T::kWRows, st->concurrent) : 1u};
  }
  std::string describe_run(const Problem& p) const override {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return "K split across a cluster as the GPU's SM count allows (no GPU here)";
    const uint32_t s = launch_splits(p, split_plan(p).splits);
    return s > 1 ? "K split " + std::to_string(s) + " ways across a cluster of " + std::to_string(s) + " CTAs"
                 : std::string("K not split");
  }
  Status run(const GemmArgs& args, void*, size_t, cudaStream_t stream) const override {
    return launch(args, stream, split_plan(args.p).splits);
  }
  // `plan.splits`: 1, 2, 4 or 8 (rounded down to one of them), at most the k-steps.
  Status run_splits(const GemmArgs& args, void*, size_t, SplitPlan plan, cudaStream_t stream) const override {
    if (plan.by_columns)
      return Status(StatusCode::invalid_argument, name() + ": splits K across a cluster, not tiles by columns");
    return launch(args, stream, plan.splits);
  }

 private:
  // The split count a launch runs: within [1, min(kMaxSplits, k-steps)], a power of two (each rank reduces 128 / S
  // rows).
  static uint32_t launch_splits(const Problem& p, uint32_t splits) {
    const uint32_t nk = uint32_t((uint64_t(p.k) + T::kBK - 1) / T::kBK);
    splits = std::clamp<uint32_t>(splits, 1, std::min<uint32_t>(T::kMaxSplits, nk));
    while (splits & (splits - 1)) splits &= splits - 1;
    return splits;
  }
  Status launch(const GemmArgs& a, cudaStream_t stream, uint32_t splits) const {
    const Problem& p = a.p;
    if (p.m == 0 || p.n == 0) return Status::Ok();
    splits = launch_splits(p, splits);
    int dev = 0;
    if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return cuda_status(e, "sm90: cudaGetDevice");
    if (dev < 0 || dev >= kMaxDevices) return Status(StatusCode::internal, "sm90: device index out of range");
    const SwapAbDevice* st = device_state<T>(dev);
    if (st->err != cudaSuccess) return cuda_status(st->err, "sm90: swapab kernel setup");

    CUtensorMap tx, tw;
    if (encode_tma({a.x, p.in_dtype, p.m, p.k, p.ldx, uint32_t(T::kMT)}, &tx) != CUDA_SUCCESS ||
        encode_tma({a.w, p.in_dtype, p.n, p.k, p.ldw, uint32_t(T::kWRows)}, &tw) != CUDA_SUCCESS)
      return Status(StatusCode::cuda_error, "sm90: cuTensorMapEncodeTiled failed (unavailable or arguments rejected)");
    EpilogueParams ep = epilogue_params(a);
    ep.splits = splits;

    const uint64_t n_tiles = (uint64_t(p.n) + T::kWRows - 1) / T::kWRows;
    const uint64_t m_tiles = (uint64_t(p.m) + T::kMT - 1) / T::kMT;
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim = {splits, 1, 1};
    cfg.gridDim = dim3(uint32_t(n_tiles * splits), uint32_t(m_tiles), 1);
    cfg.blockDim = dim3(T::kThreads, 1, 1);
    cfg.dynamicSmemBytes = T::kSmemBytes;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    if (cudaError_t e = launch_result(cudaLaunchKernelEx(&cfg, swapab_kernel<T>, tx, tw, ep, uint32_t(p.k))); e != cudaSuccess)
      return cuda_status(e, "sm90: swapab launch");
    return Status::Ok();
  }
};

}  // namespace

// 64 W rows x 64 or 128 tokens per CTA, 12 or 8 stages (~192 KB). Session 5 (docs/benchmarks.md runs 39-44): the
// 128-row variants (MT 64, 128, 256, one or two CTAs per SM) were slower on every M <= 128 shape measured, so only
// the 64-row ones are registered; against cuBLASLt they reach 1.0-1.08x on a few long-K layers at M = 64-128.
void add_swapab(std::vector<std::unique_ptr<Kernel>>& out) {
  out.push_back(std::make_unique<SwapAbKernel<SwapAbTraits<DType::bf16, 64, 12, 64>>>());
  out.push_back(std::make_unique<SwapAbKernel<SwapAbTraits<DType::bf16, 128, 8, 64>>>());
  out.push_back(std::make_unique<SwapAbKernel<SwapAbTraits<DType::fp16, 128, 8, 64>>>());
}

}  // namespace tgemm::sm90
