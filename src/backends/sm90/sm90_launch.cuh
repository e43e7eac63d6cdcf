// Host side of the sm90 kernels: tensor maps, launch, and the Kernel wrapper that declares each instantiation's
// Limits. Included by the instantiation files (one per input dtype, so the build parallelises).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/sm90/sm90_config.h"
#include "core/cuda_status.h"
#include "backends/sm90/sm90_kernel.cuh"
#include "backends/sm90/sm90_kernel_base.h"
#include "backends/sm90/sm90_split_plan.h"
#include "core/env.h"
#include "core/launch_error.h"
#include "core/per_device.h"
#include "core/split_counters.h"
#include "core/tensor_map.h"
#include "tgemm/kernel.h"

namespace tgemm::sm90 {

// Per-device, per-instantiation facts computed once: the shared-memory opt-in and how many clusters fit.
struct DeviceState {
  cudaError_t err = cudaSuccess;
  int max_clusters = 0;
};

// How many clusters of `cluster` CTAs of kernel `fn` (`threads` threads, `smem` bytes of dynamic shared memory) can
// be resident at once (cudaOccupancyMaxActiveClusters; not every SM can host a cluster member).
inline cudaError_t max_active_clusters(const void* fn, int threads, int smem, int cluster, int* out) {
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = unsigned(cluster);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.gridDim = dim3(unsigned(cluster * 64), 1, 1);
  cfg.blockDim = dim3(unsigned(threads), 1, 1);
  cfg.dynamicSmemBytes = size_t(smem);
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaOccupancyMaxActiveClusters(out, fn, &cfg);
}

// The run-time epilogue parameters of a call (both sm90 skeletons); split-K fields stay at their defaults.
inline EpilogueParams epilogue_params(const GemmArgs& a) {
  const Problem& p = a.p;
  EpilogueParams ep;
  ep.y = a.y;
  ep.ldy = p.ldy;
  ep.bias = a.bias;
  ep.m = uint32_t(p.m);
  ep.n = uint32_t(p.n);
  ep.out = p.out_dtype == DType::bf16 ? OutKind::bf16 : p.out_dtype == DType::fp16 ? OutKind::fp16 : OutKind::fp32;
  ep.bias_kind = !(p.has_bias && a.bias) ? BiasKind::none
                 : p.bias_dtype == DType::fp32 ? BiasKind::fp32
                                               : BiasKind::same_as_input;
  return ep;
}

// A split plan (split-K configurations only) needs splitk_workspace_bytes of workspace. No defaults: the registered
// kernel (Sm90Kernel below) passes its own plan and L2 hints, and a call without them would run otherwise.
template <class T>
Status launch(const GemmArgs& a, cudaStream_t stream, void* ws, size_t ws_bytes, SplitPlan plan, uint32_t l2_hints) {
  const Problem& p = a.p;
  if (p.m == 0 || p.n == 0) return Status::Ok();
  if (!T::kSplitK) plan.splits = 1;
  if (plan.by_columns && plan.splits > 1 && !T::kColumnTail)
    return Status(StatusCode::invalid_argument, "sm90: this configuration runs no column tail (SplitPlan::by_columns)");

  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return cuda_status(e, "sm90: cudaGetDevice");
  if (dev < 0 || dev >= kMaxDevices) return Status(StatusCode::internal, "sm90: device index out of range");

  static PerDevice<DeviceState> states;
  const DeviceState& st = states.get(dev, [&](DeviceState& s) {
    auto* fn = gemm_kernel<T>;
    s.err = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
    if (s.err != cudaSuccess) return;
    if constexpr (T::kClusterSize > 1) {
      // Not every SM can host a cluster member (GPC granularity): size the persistent grid by what fits.
      s.err = max_active_clusters(reinterpret_cast<const void*>(fn), T::kThreads, T::kSmemBytes, T::kClusterSize,
                                   &s.max_clusters);
    } else {
      s.err = cudaDeviceGetAttribute(&s.max_clusters, cudaDevAttrMultiProcessorCount, dev);
    }
    if (s.err == cudaSuccess && s.max_clusters < 1) s.err = cudaErrorInvalidConfiguration;
  });
  if (st.err != cudaSuccess) return cuda_status(st.err, "sm90: kernel setup");

  CUtensorMap tx, tw;
  // X and W in boxes of one cluster slice of the tile (a CTA multicasts its slice to the cluster); W in half tiles
  // where a column tail may fetch only its half.
  const uint32_t w_box = uint32_t(T::kColumnTail ? T::kBN / 2 : T::kBN / T::kClusterM);
  if (encode_tma({a.x, p.in_dtype, p.m, p.k, p.ldx, uint32_t(T::kBM / T::kClusterN)}, &tx) != CUDA_SUCCESS ||
      encode_tma({a.w, p.in_dtype, p.n, p.k, p.ldw, w_box}, &tw) != CUDA_SUCCESS) {
    return Status(StatusCode::cuda_error, "sm90: cuTensorMapEncodeTiled failed (unavailable or arguments rejected)");
  }

  // TMA-store epilogue: Y in boxes of 64 columns x one warpgroup's rows, the staging buffer's boxes (16-bit outputs;
  // fp32 is stored from registers).
  CUtensorMap ty{};
  if (T::kTmaStore && p.out_dtype != DType::fp32 &&
      encode_tma({a.y, p.out_dtype, p.m, p.n, p.ldy, uint32_t(T::kWgRows)}, &ty) != CUDA_SUCCESS) {
    return Status(StatusCode::cuda_error, "sm90: cuTensorMapEncodeTiled failed for Y");
  }

  EpilogueParams ep = epilogue_params(a);
  ep.l2_hints = l2_hints;

  const uint64_t m_blocks = (uint64_t(p.m) + T::kBM - 1) / T::kBM;
  const uint64_t n_blocks = (uint64_t(p.n) + T::kBN - 1) / T::kBN;
  const uint64_t cluster_tiles =
      ((m_blocks + T::kClusterM - 1) / T::kClusterM) * ((n_blocks + T::kClusterN - 1) / T::kClusterN);
  // Every split needs at least one k-step (the first wgmma of a unit initialises its accumulators).
  plan = clamp_plan(plan, cluster_tiles, (uint64_t(p.k) + T::kBK - 1) / T::kBK);
  const uint64_t units = cluster_tiles - plan.split_tiles + uint64_t(plan.split_tiles) * plan.splits;
  if (units > uint64_t(INT32_MAX))
    return Status(StatusCode::invalid_argument, "sm90: " + std::to_string(units) + " work units > 2^31-1 (split plan)");
  const uint64_t clusters = std::min<uint64_t>(units, uint64_t(st.max_clusters));
  ep.splits = plan.splits;
  ep.split_tiles = plan.split_tiles;
  ep.by_columns = plan.by_columns && plan.split_tiles > 0 ? 1u : 0u;
  if (plan.split_tiles > 0 && !plan.by_columns) {
    const uint64_t need = splitk_workspace_bytes(T::kBM, T::kBN, p, plan);
    if (!ws || ws_bytes < need || reinterpret_cast<uintptr_t>(ws) % 256 != 0) {
      return Status(StatusCode::internal, "sm90: split-K needs " + std::to_string(need) +
                                              " bytes of 256-byte aligned workspace, got " + std::to_string(ws_bytes));
    }
    ep.partials = reinterpret_cast<float*>(static_cast<char*>(ws) + splitk_counter_bytes(plan.split_tiles));
    if (cudaError_t e = split_counters(a.counters, ws, int64_t(plan.split_tiles), stream, &ep.counters);
        e != cudaSuccess)
      return cuda_status(e, "sm90: split-K counter reset");
  }

  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[1];
  cfg.gridDim = dim3(uint32_t(clusters * T::kClusterSize), 1, 1);
  cfg.blockDim = dim3(T::kThreads, 1, 1);
  cfg.dynamicSmemBytes = T::kSmemBytes;
  cfg.stream = stream;
  if constexpr (T::kClusterSize > 1) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = T::kClusterSize;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  const cudaError_t e = launch_result(cudaLaunchKernelEx(&cfg, gemm_kernel<T>, tx, tw, ty, ep, uint32_t(p.k)));
  if (e != cudaSuccess) return cuda_status(e, "sm90: launch");
  return Status::Ok();
}

// The L2 hints a configuration runs with (L2Hint bits). Unclustered with the staged epilogue: X and W evict_last,
// against no hint 1.005-1.027x as fast at the seed's M >= 340000, 0.992-1.024x on 10 other shapes (run 154,
// in-process pairs; W alone gains nothing). None for the TMA-store twins (0.973-1.008x, geometric mean 0.995) nor
// the clustered kernels (the c2x1 ping-pong 5% slower at M >= 340000, run 153).
template <class T>
inline constexpr uint32_t kDefaultL2Hints = T::kClusterSize == 1 && !T::kTmaStore ? (kL2HintW | kL2HintX) : 0u;

// How a registered kernel runs its configuration beyond the template: the registered kernel is the default; the
// others are development twins for in-process A/B (`add` below), named after what differs.
template <class T>
struct Variant {
  uint32_t l2_hints = kDefaultL2Hints<T>;  // L2Hint bits: "_l2h<bits>" when not the default
  uint32_t fixed_splits = 0;               // split-K only: every tile split this many ways ("_skauto" -> "_sk<s>")
  int64_t max_rows = 0;                    // at most this many rows per launch (the dispatcher splits M): "_rows<R>"

  std::string name() const {
    std::string s = config_name(T::kConfig);
    if constexpr (T::kSplitK)
      if (fixed_splits > 0) s.replace(s.find("_skauto"), 7, "_sk" + std::to_string(fixed_splits));
    if (l2_hints != kDefaultL2Hints<T>) s += "_l2h" + std::to_string(l2_hints);
    if (max_rows > 0) s += "_rows" + std::to_string(max_rows);
    return s;
  }
  bool dev_twin() const { return l2_hints != kDefaultL2Hints<T> || (T::kSplitK && fixed_splits > 0) || max_rows > 0; }
};

// One registered configuration.
template <class T>
class Sm90Kernel final : public Sm90KernelBase {
 public:
  explicit Sm90Kernel(const Variant<T>& v = {})
      : Sm90KernelBase(T::kConfig, T::kBM, T::kBN, T::kColumnTail), v_(v) {
    name_ = v.name();
    dev_twin_ = v.dev_twin();
  }

  // Beyond the common limits: the scheduler numbers cluster tiles in 32 bits.
  Verdict can_implement(const Problem& p) const override {
    Verdict v = check_common(p);
    if (!v.ok()) return v;
    // A TMA store clips at the tensor's last column only to 16-byte granularity: with N not a multiple of 8 it wrote
    // the rest of the last chunk, Y's padding columns [N, ldy), in every row, and past Y's span after the last row
    // (session 43: element 383 of each row at N = 383). fp32 Y is stored from registers.
    if (T::kTmaStore && p.out_dtype != DType::fp32 && p.n % 8 != 0)
      return {Verdict::Kind::unsupported, "N = " + std::to_string(p.n) +
                                              " is not a multiple of 8: TMA stores write whole 16-byte chunks, which "
                                              "would reach into Y's padding columns"};
    const uint64_t m_tiles = (uint64_t(p.m) + T::kBM * T::kClusterM - 1) / (T::kBM * T::kClusterM);
    const uint64_t n_tiles = (uint64_t(p.n) + T::kBN * T::kClusterN - 1) / (T::kBN * T::kClusterN);
    // (split-K multiplies the units by split_plan(p).splits, which is 1 unless that product stays below 2^31)
    if (m_tiles * n_tiles > uint64_t(INT32_MAX)) {
      return Verdict{Verdict::Kind::addressing, "cluster tiles " + std::to_string(m_tiles) + " x " +
                                                    std::to_string(n_tiles) + " > 2^31-1 (32-bit tile scheduler)"};
    }
    if (v_.fixed_splits > 0 && m_tiles * n_tiles * v_.fixed_splits > uint64_t(INT32_MAX)) {
      return Verdict{Verdict::Kind::addressing, std::to_string(m_tiles * n_tiles) + " tiles x " +
                                                    std::to_string(v_.fixed_splits) +
                                                    " splits > 2^31-1 work units (32-bit tile scheduler)"};
    }
    if (v_.max_rows > 0 && p.m > v_.max_rows)
      return Verdict{Verdict::Kind::addressing, "M = " + std::to_string(p.m) + " > " + std::to_string(v_.max_rows) +
                                                    " rows per launch (development twin)"};
    return v;
  }

  SplitChoice split_choice(const Problem& p) const override {
    if constexpr (T::kSplitK) {
      if (v_.fixed_splits > 0) return {v_.fixed_splits};
      // Development: TGEMM_SM90_SPLITS=s forces every tile's split count (A/B timing of choose_splits' model);
      // TGEMM_SM90_TAIL_MIN_KSTEPS=k moves the k-range tail's K cutoff (-1: none), TGEMM_SM90_COLUMN_TAIL=0 turns the
      // column tail off.
      static const int forced = env_int("TGEMM_SM90_SPLITS", 0);
      if (forced > 0) return {uint32_t(std::min<int>(forced, int(kMaxSplits)))};
      static const int tail_min = env_int("TGEMM_SM90_TAIL_MIN_KSTEPS", kMinKStepsTail);
      static const bool column_tail = T::kColumnTail && env_int("TGEMM_SM90_COLUMN_TAIL", 1) != 0;
      return choose_splits(T::kBM, T::kBN, p, current_sm_count(), tail_min, column_tail);
    } else {
      return {};
    }
  }
  std::string describe_run(const Problem& p) const override {
    return T::kSplitK ? describe_split_plan(T::kBM, T::kBN, p, split_plan(p)) : std::string();
  }
  // Split-K: the split plan is a function of the problem (and the SM count), so a problem always runs with the
  // same plan and gives the same bits.
  size_t workspace_bytes(const Problem& p) const override {
    return size_t(splitk_workspace_bytes(T::kBM, T::kBN, p, split_plan(p)));
  }
  Status run(const GemmArgs& args, void* ws, size_t ws_bytes, cudaStream_t stream) const override {
    return launch<T>(args, stream, ws, ws_bytes, split_plan(args.p), v_.l2_hints);
  }
  Status run_splits(const GemmArgs& args, void* ws, size_t ws_bytes, SplitPlan plan,
                    cudaStream_t stream) const override {
    return launch<T>(args, stream, ws, ws_bytes, plan, v_.l2_hints);
  }

 private:
  Variant<T> v_;
};

template <class T>
void add(std::vector<std::unique_ptr<Kernel>>& out) {
  out.push_back(std::make_unique<Sm90Kernel<T>>());
  // Development twins, each registered beside the default so that one process times them interleaved with it
  // (tgemm bench --kernel); the untuned default never offers them (Sm90KernelBase::dev_twin):
  //  TGEMM_SM90_L2_TWINS=0,2,...     with those L2Hint bits ("<name>_l2h<bits>");
  //  TGEMM_SM90_SPLIT_TWINS=2,4,...  split-K configurations with every tile split that many ways ("_sk<s>"; not
  //                                  bounded by the model's kMaxSplits: the scheduler takes any count up to the k-steps);
  //  TGEMM_SM90_ROWS_TWINS=R,...     at most R rows per launch ("<name>_rows<R>"; the dispatcher runs M in pieces).
  static const std::vector<int> l2 = env_int_list("TGEMM_SM90_L2_TWINS");
  static const std::vector<int> splits = env_int_list("TGEMM_SM90_SPLIT_TWINS");
  static const std::vector<int> rows = env_int_list("TGEMM_SM90_ROWS_TWINS");
  auto twin = [&](const Variant<T>& v) { out.push_back(std::make_unique<Sm90Kernel<T>>(v)); };
  for (int bits : l2)
    if (bits >= 0 && uint32_t(bits) != kDefaultL2Hints<T>) twin({.l2_hints = uint32_t(bits)});
  if constexpr (T::kSplitK)
    for (int s : splits)
      if (s >= 2) twin({.fixed_splits = uint32_t(s)});
  for (int r : rows)
    if (r >= 256) twin({.max_rows = r});
}

// Defines `void fn(out)`, which registers every configuration of the list LIST (sm90_configs.h) with `bits`-bit Y
// offsets. One instantiation file per list and index width calls it, so a parallel build compiles them side by side.
#define TGEMM_SM90_ADD_BITS(bits, dt, bm, bn, st, cm, cn, epi, pp, sk, lag) \
  add<Traits<DType::dt, bm, bn, st, cm, cn, bits, EpiMode::epi, pp, sk, lag>>(out);
#define TGEMM_SM90_ADD_I32(...) TGEMM_SM90_ADD_BITS(32, __VA_ARGS__)
#define TGEMM_SM90_ADD_I64(...) TGEMM_SM90_ADD_BITS(64, __VA_ARGS__)
#define TGEMM_SM90_INSTANTIATE(fn, LIST, bits) \
  void fn(std::vector<std::unique_ptr<Kernel>>& out) { LIST(TGEMM_SM90_ADD_I##bits) }

}  // namespace tgemm::sm90
