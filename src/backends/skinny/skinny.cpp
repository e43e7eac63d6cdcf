// skinny backend: the Kernel objects, their registration and the untuned default.
//
// One compiled kernel per (input dtype, M tile, 16-byte or element loads) serves several registered kernels
// that differ only in the split-K they launch with (a launch parameter), so the tuner can pick the split.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/skinny/skinny_config.h"
#include "backends/skinny/skinny_tma.h"
#include "core/cuda_status.h"
#include "core/env.h"
#include "core/launch_error.h"
#include "core/per_device.h"
#include "core/smem_optin.h"
#include "core/split_counters.h"
#include "core/tensor_map.h"
#include "registry/registry.h"

namespace tgemm::skinny {

// In skinny_bf16.cu / skinny_fp16.cu (skinny_instances.cuh): the __global__ function of a Config, or null.
const void* kernel_bf16(const Config& c);
const void* kernel_fp16(const Config& c);

namespace {

constexpr int kMTiles[] = {8, 16, 32, 64};
constexpr int kFixedSplits[] = {1, 2, 4, 8, 16, 32};
constexpr int kScalarMTile = 64;
// TMA variant: M tile 16 only; splits the tuner tries beside auto (1 = one block per 128 rows, the big layers;
// 4 and 8 = 2 warps x 2 or 4 cluster blocks along K, the 4-8K-row layers).
constexpr int kTmaMTile = 16;
constexpr int kTmaFixedSplits[] = {1, 4, 8};
// Persistent variant: M tiles 16, 32 and 64; the fixed splits are its WK (tiles of 128 / WK rows), beside auto
// (which also splits K across blocks where row tiles are few). M tile 64 takes WK <= 2 (ws_max_wk), so it registers
// auto, sk1 and sk2, and M tile 32 (WK <= 4) auto and sk1..sk4: twelve kernels per dtype for the tuner to time.
constexpr int kWsMTiles[] = {16, 32, 64};
// The same kernel with wgmma consumers at M tiles 8 and 16 ("wsg", skinny_ws_kernel.cuh), with 1 or 2 units per
// warpgroup per stage: for the tuner. WK 2 only: with WK 1 a warpgroup takes 64 of a tile's 128 rows, and at the
// balanced tiles' 64 or fewer rows the second one multiplies rows that are never stored (run 397, before the X copies
// became one per stage: sk1 took 0.96-1.75x sk2's time on the decode rows, ahead only at 37888 x 3584, where the ws
// picks lead both; run 398: auto read level with sk2 on every row).
constexpr int kWsgMTiles[] = {8, 16};
constexpr int kWsgUpw[] = {1, 2};
constexpr int kWsgWk = 2;
constexpr int kWsFixedSplits[] = {1, 2, 4, 8};
// Row-stream variant (skinny_rs.h): M tiles 1, 2 and 4, for the tuner (not in the untuned default; six M = 1 decode rows
// of the shipped table name m1 or m1_b128, runs 325 and 327).
constexpr int kRsMTiles[] = {1, 2, 4};
// Its grid: one block per SM (0), or 128 blocks. Run 326 (graph replay, x cuBLASLt, m1 at M = 1, two rounds, with the
// ring aligned): 128 blocks 1.201 against 1.161 at 1 x 4096 x 4096 (32 rows a block either way at most; the 128
// shares are also 256 KB apart), 1.326 against 1.259 at 1 x 1280 x 8192, 1.225 against 1.197 at 1 x 3584 x 3584, but
// 1.024 against 1.029 at 1 x 28672 x 4096 and 1.10 against 1.11 at 1 x 37888 x 3584. So both, for the tuner.
constexpr int kRsBlockCaps[] = {0, 128};

// The row-stream kernels' ring depth per group as a power of two (skinny_rs.h, kRsGroupStagesLog2), or
// TGEMM_SKINNY_RS_STAGES=1 or 2 stages per group (A/B timing).
int rs_group_stages_log2() {
  static const int v = [] {
    const int e = env_int("TGEMM_SKINNY_RS_STAGES", 0);
    return e == 1 ? 0 : e == 2 ? 1 : kRsGroupStagesLog2;
  }();
  return v;
}

// W's copies marked evict_first in L2, so that W, read once, leaves before what the next launches use again there (X,
// bias, the kernel's code). Run 331 (graph replay, x cuBLASLt, the 12 M = 1 decode rows, two rounds): m1 geometric mean
// 1.050 -> 1.065, m1_b128 1.067 -> 1.080, 11 of 12 rows up (1 x 6144 x 4096 +1.8%, 1 x 3584 x 3584 +2.5%).
// TGEMM_SKINNY_RS_W_EVICT_FIRST=0 turns it off (A/B timing).
bool rs_w_evict_first() {
  static const bool on = env_switch("TGEMM_SKINNY_RS_W_EVICT_FIRST");
  return on;
}

// The row-stream kernels' grid: one block per SM, or TGEMM_SKINNY_RS_BLOCKS=n blocks at most (A/B timing: in
// stream_probe.cu 128 blocks with contiguous shares streamed at 88.8% and 132 at 75.6%, unexplained; session 33).
int rs_block_cap(int sms) {
  static const int env = env_int("TGEMM_SKINNY_RS_BLOCKS", 0);
  return env > 0 && env < sms ? env : sms;
}

// TGEMM_SKINNY_WS3=0: the persistent kernel fetches every stage unit by unit with 2D copies (A/B timing).
bool ws3_enabled() {
  static const bool on = env_switch("TGEMM_SKINNY_WS3");
  return on;
}

// The persistent kernel's ring depth for M and its tiles' rows (skinny_config.h, ws_default_stage_cap), or
// TGEMM_SKINNY_WS_STAGES=n (2..16, every M; A/B timing of the bytes in flight). Shared memory may allow fewer
// (ws_stages).
int ws_stage_cap(int64_t m, int tile_rows, int slot_rows) {
  static const int env = [] {
    const int v = env_int("TGEMM_SKINNY_WS_STAGES", 0);
    return v >= 2 && v <= kWsMaxStages ? v : 0;
  }();
  if (env > 0) return env;
  return ws_default_stage_cap(m, tile_rows, slot_rows);
}

// The persistent kernel's L2 prefetch before its PDL wait (skinny_config.h, kWsPrefetchBytes), or
// TGEMM_SKINNY_WS_PREFETCH_KB=n KB of W per block (A/B timing).
int ws_prefetch_bytes() {
  static const int v = [] {
    const int kb = env_int("TGEMM_SKINNY_WS_PREFETCH_KB", -1);
    return kb >= 0 ? kb * 1024 : kWsPrefetchBytes;
  }();
  return v;
}

// TGEMM_SKINNY_WS_SOLO=0 (A/B timing): the persistent kernel asks only for the shared memory its ring needs, so that a
// second block (the next grid's, under PDL) may share its SM (skinny_config.h, kWsSoloSmemBytes).
bool ws_solo() {
  static const bool on = env_switch("TGEMM_SKINNY_WS_SOLO");
  return on;
}

// TGEMM_SKINNY_WS_EARLY_RING=0 (A/B timing): the persistent kernel's producer issues its first ring from its loop,
// not in straight-line code right after the PDL wait (skinny_ws_kernel.cuh).
bool ws_early_ring() {
  static const bool on = env_switch("TGEMM_SKINNY_WS_EARLY_RING");
  return on;
}

// The persistent kernels' W tensor copies evict_first in L2, as the row-stream kernels' (rs_w_evict_first). Run 333
// (decode bench in graph replay, two rounds each way, alternated): +2.05% on average over the 44 decode rows whose pick
// is a ws kernel, 43 of them faster; the 16 other rows +0.07%. TGEMM_SKINNY_WS_W_EVICT_FIRST=0 turns it off (A/B
// timing).
bool ws_w_evict_first() {
  static const bool on = env_switch("TGEMM_SKINNY_WS_W_EVICT_FIRST");
  return on;
}

// The smallest K the "auto" ws kernels split across blocks (skinny_config.h, kWsMinSplitK), or
// TGEMM_SKINNY_WS_MIN_SPLIT_K=k (A/B timing).
int64_t ws_min_split_k() {
  static const int64_t v = [] {
    const int e = env_int("TGEMM_SKINNY_WS_MIN_SPLIT_K", 0);
    return e > 0 ? int64_t(e) : kWsMinSplitK;
  }();
  return v;
}

// The persistent kernels take balanced row tiles (skinny_config.h, ws_tile_rows) wherever K stays in one block (the
// "auto" ones after choosing their WK as before); TGEMM_SKINNY_WS_BALANCE=0 gives them tiles of 128 / WK rows (A/B
// timing).
bool ws_balance() {
  static const bool on = env_switch("TGEMM_SKINNY_WS_BALANCE");
  return on;
}

// The row multiple of balanced tiles (0: not balanced; M > kWsBalanceMaxM): 8 for the wgmma M tile (ws_tile_rows),
// else 4, or TGEMM_SKINNY_WS_TILE_ALIGN=a (1, 2, 4 or 8; A/B timing). Run 248 (graph replay, M = 1 / 8): 4608 x 3584
// on m32 sk2 1.00 / 0.97x cuBLASLt with 35-row tiles, 1.025 / 0.98x with 36, 1.022 / 0.99x with 40; 3584 x 18944 on
// sk4 1.085x with 28-row tiles (alignment 1 or 4), 1.03x with 32.
int ws_balance_align(bool wide, int64_t m) {
  static const int env = [] {
    const int v = env_int("TGEMM_SKINNY_WS_TILE_ALIGN", 0);
    return v == 1 || v == 2 || v == 4 || v == 8 ? v : 0;
  }();
  if (!ws_balance() || m > kWsBalanceMaxM) return 0;
  if (wide) return 8;
  return env > 0 ? env : 4;
}

// TGEMM_SKINNY_WS_SPLIT=0: the persistent "auto" kernels never split K across blocks (A/B timing; WK as before).
bool ws_split_enabled() {
  static const bool on = env_switch("TGEMM_SKINNY_WS_SPLIT");
  return on;
}

// TGEMM_SKINNY_PDL=0 launches without the programmatic-dependency attribute (for A/B measurements).
bool pdl_enabled() {
  static const bool on = env_switch("TGEMM_SKINNY_PDL");
  return on;
}

class SkinnyKernel final : public Kernel {
 public:
  SkinnyKernel(const Config& cfg, const void* fn) : cfg_(cfg), name_(cfg.name()), limits_(cfg.limits()), fn_(fn) {}

  const std::string& name() const override { return name_; }
  Backend backend() const override { return Backend::skinny; }
  const Limits& limits() const override { return limits_; }
  // Fixed-order reductions; the ws split's atomic counter only decides which block does the fixed-order sum.
  bool deterministic() const override { return true; }
  // The persistent "auto" kernel's split across blocks: counters and fp32 partial tiles (ws_workspace_bytes).
  size_t workspace_bytes(const Problem& p) const override {
    if (!cfg_.ws || cfg_.split_k > 0 || p.m < 1 || p.m > cfg_.max_m || p.n < 1 || p.k < 1) return 0;
    return size_t(ws_workspace_bytes(shape(p, current_sm_count()), p.m));
  }

  // The launch this kernel makes for `p` on a GPU with `sms` SMs (exposed for `explain` and tests).
  LaunchShape shape(const Problem& p, int sms) const {
    int split = cfg_.split_k;
    if (cfg_.ws) {
      if (split > 0) return ws_launch_shape(p.n, p.k, split, sms, ws_balance_align(cfg_.wide(), p.m));
      // M tile 16 never splits across blocks: device call ws-3 (graph replay, forced split on / off) measured it
      // slower wherever the model chose a split (1280x8192 M=1 12.6 against 9.7 us, M=16 16.4 against 10.5;
      // 4608x3584 M=16 24.8 against 13.9) and equal elsewhere. Run 80, with the stream's zeroed counters (no memset):
      // no better (1280x8192 M=1 9.1 against 9.4, M=16 10.1 against 9.8; 4608x3584 M=1 12.7 against 13.5, M=16 15.0
      // against 14.3), and ws_auto_shape's tile choice cost 6144x4096 2 us.
      // The WK (and split) of the model, then balanced tiles where K stays in one block.
      const int align = ws_balance_align(cfg_.wide(), p.m);
      if (cfg_.max_m <= 16 || !ws_split_enabled())
        return ws_launch_shape(p.n, p.k, ws_auto_wk(p.n, p.k, sms, cfg_.max_wk()), sms, align);
      const LaunchShape sh = ws_auto_shape(p.m, p.n, p.k, cfg_.max_wk(), sms, ws_min_split_k());
      return sh.s == 1 ? ws_launch_shape(p.n, p.k, 1 << sh.wk_log2, sms, align) : sh;
    }
    if (cfg_.tma) return tma_launch_shape(p.n, p.k, split > 0 ? split : tma_auto_split(p.n, p.k, sms));
    if (split <= 0) split = auto_split(p.m, p.n, p.k, cfg_.max_wk(), sms, kBlocksPerSm, cfg_.depth());
    return launch_shape(p.n, p.k, split, cfg_.max_wk());
  }

  Status run(const GemmArgs& a, void* workspace, size_t workspace_bytes, cudaStream_t stream) const override {
    const Problem& p = a.p;
    if (p.m <= 0 || p.n <= 0) return Status::Ok();  // nothing to write
    if (p.k <= 0 || p.m > cfg_.max_m)
      return Status(StatusCode::invalid_argument,
                    name_ + ": problem outside the kernel's limits (K must be > 0, M <= " +
                        std::to_string(cfg_.max_m) + ")");
    if (fn_ == nullptr) return Status(StatusCode::internal, name_ + ": kernel not compiled into this build");

    if (cfg_.rs) return run_rs(a, stream);

    const LaunchShape sh = shape(p, current_sm_count());
    Params prm = operands_of(a);
    prm.k_steps = sh.k_steps;
    prm.sps = sh.sps;
    prm.wk_log2 = sh.wk_log2;
    prm.s = sh.s;

    TmaParams tp;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(unsigned(sh.blocks), 1, 1);
    lc.blockDim = dim3(kThreads, 1, 1);
    lc.dynamicSmemBytes = 0;
    if (cfg_.ws) {
      // X box of exactly M rows; W box of the tile's rows; ring depth ws_stage_cap() where shared memory allows.
      tp.p = prm;
      tp.x_rows = int(p.m);
      const int wk = 1 << sh.wk_log2;
      const int cap = ws_stage_cap(p.m, int(sh.block_rows), kBlockRowsMax >> sh.wk_log2);
      int dyn = 0;
      if (cfg_.wide()) {
        // Units TR rows apart, X in MT-row slots, upw units per warpgroup per stage (skinny_config.h, kWsWideSlack):
        // the W bytes in flight of cap one-unit stages, kWsWideStages at least where shared memory holds them (the
        // largest stage fits kWsWideMinStages times, a static_assert there). Only M tile 64 splits across blocks,
        // with upw 1: splits are whole WK stages.
        const int sb = ws_wide_stage_bytes(wk * cfg_.upw, int(sh.block_rows), cfg_.max_m);
        tp.stages = std::min({std::max(kWsWideStages, cap / cfg_.upw),
                              (ws_smem_bytes(cfg_.max_m) - kWsWideSlack - int(kSmemAlign)) / sb, kWsMaxStages});
        dyn = tp.stages * sb + kWsWideSlack + int(kSmemAlign);
      } else {
        tp.stages = std::min(ws_stages(wk, int(p.m), cfg_.max_m), cap);
        dyn = tp.stages * ws_stage_bytes(wk, int(p.m)) + int(kSmemAlign);
      }
      tp.prefetch_units = ws_prefetch_bytes() / int(sh.block_rows * kTmaUnitK * dtype_size(p.in_dtype));
      tp.early_ring = ws_early_ring() ? 1 : 0;
      tp.w_evict_first = ws_w_evict_first() ? 1 : 0;
      tp.tile_rows = int(sh.block_rows);  // the slot's 128 / WK rows, fewer with balanced tiles (ws_tile_rows)
      if (sh.s > 1) {
        if (sh.s > kWsMaxSplits)  // the last block's sum holds at most that many slots (skinny_ws_kernel.cuh)
          return Status(StatusCode::internal, name_ + ": split across " + std::to_string(sh.s) + " blocks, more than " +
                                                  std::to_string(kWsMaxSplits));
        const int64_t need = ws_workspace_bytes(sh, p.m);
        if (workspace == nullptr || int64_t(workspace_bytes) < need)
          return Status(StatusCode::invalid_argument, name_ + ": the split across " + std::to_string(sh.s) +
                                                          " blocks needs a workspace of " + std::to_string(need) + " bytes");
        tp.p.partials = reinterpret_cast<float*>(static_cast<char*>(workspace) + ws_counter_bytes(sh));
        uint32_t* counters = nullptr;
        if (cudaError_t e = split_counters(a.counters, workspace, sh.row_tiles, stream, &counters); e != cudaSuccess)
          return cuda_status(e, name_ + ": counter reset failed");
        tp.p.counters = reinterpret_cast<int*>(counters);
      }
      CUresult r = encode_tma({a.w, p.in_dtype, p.n, p.k, p.ldw, uint32_t(sh.block_rows)}, &tp.w);
      if (r == CUDA_SUCCESS) r = encode_tma({a.x, p.in_dtype, p.m, p.k, p.ldx, uint32_t(p.m)}, &tp.x);
      if (r != CUDA_SUCCESS)
        return Status(StatusCode::cuda_error, name_ + ": cuTensorMapEncodeTiled failed (" + std::to_string(int(r)) + ")");
      // Whole-stage 3D copies where K has at least one stage of full units; if the driver refuses the overlapping
      // views the kernel falls back to unit-by-unit copies (same result, same order of sums). The wgmma M tiles' X
      // boxes are MT rows, so that one copy puts each unit in its MT-row slot; rows past M come zero-filled, not read.
      const int su = wk * cfg_.upw;  // units per stage (upw is 1 but on the wsg2 kernels)
      tp.kfull = int(p.k / kTmaUnitK);
      tp.use3 = 0;
      if (ws3_enabled() && tp.kfull >= su &&
          encode_tma({a.w, p.in_dtype, p.n, p.k, p.ldw, uint32_t(sh.block_rows), tp.kfull, uint32_t(su)}, &tp.w3) == CUDA_SUCCESS &&
          encode_tma({a.x, p.in_dtype, p.m, p.k, p.ldx, uint32_t(cfg_.wide() ? cfg_.max_m : p.m), tp.kfull, uint32_t(su)},
                     &tp.x3) == CUDA_SUCCESS)
        tp.use3 = 1;
      if (ws_solo()) dyn = std::max(dyn, kWsSoloSmemBytes);
      const int dyn_max = ws_smem_bytes(cfg_.max_m);
      if (cudaError_t e = smem_optin_.ensure(fn_, dyn_max); e != cudaSuccess)
        return cuda_status(e, name_ + ": shared-memory opt-in failed");
      lc.blockDim = dim3(kTmaThreads, 1, 1);
      lc.dynamicSmemBytes = size_t(dyn);
    } else if (cfg_.tma) {
      tp.p = prm;
      tp.x_rows = tma_x_rows(int(p.m), cfg_.max_m);
      tp.stages = tma_stages(1 << sh.wk_log2, tp.x_rows);
      CUresult r = encode_tma({a.w, p.in_dtype, p.n, p.k, p.ldw, uint32_t(sh.block_rows)}, &tp.w);
      if (r == CUDA_SUCCESS) r = encode_tma({a.x, p.in_dtype, p.m, p.k, p.ldx, uint32_t(tp.x_rows)}, &tp.x);
      if (r != CUDA_SUCCESS)
        return Status(StatusCode::cuda_error, name_ + ": cuTensorMapEncodeTiled failed (" + std::to_string(int(r)) + ")");
      if (cudaError_t e = smem_optin_.ensure(fn_, kTmaSmemBytes); e != cudaSuccess)
        return cuda_status(e, name_ + ": shared-memory opt-in failed");
      lc.blockDim = dim3(kTmaThreads, 1, 1);
      lc.dynamicSmemBytes = size_t(tp.stages) * tma_stage_bytes(1 << sh.wk_log2, tp.x_rows) + kSmemAlign;
    }
    void* arg = cfg_.tma || cfg_.ws ? static_cast<void*>(&tp) : static_cast<void*>(&prm);
    // The persistent kernel's blocks along K meet in the workspace, not a cluster.
    return launch(lc, stream, arg, sh.s > 1 && !cfg_.ws ? int(sh.s) : 1);
  }

 private:
  // Every variant's launch: a cluster of `cluster` blocks along x where > 1, programmatic dependent launch where
  // enabled (a kernel may set up and warm L2 with its first W bytes before it waits on the previous grid; X, W and Y
  // are read and written after the wait, see griddepcontrol in the kernels), and the launch's error as a Status.
  Status launch(cudaLaunchConfig_t lc, cudaStream_t stream, void* arg, int cluster) const {
    lc.stream = stream;
    cudaLaunchAttribute attr[2];
    unsigned na = 0;
    if (cluster > 1) {
      attr[na].id = cudaLaunchAttributeClusterDimension;
      attr[na].val.clusterDim.x = unsigned(cluster);
      attr[na].val.clusterDim.y = 1;
      attr[na].val.clusterDim.z = 1;
      ++na;
    }
    if (pdl_enabled()) {
      attr[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[na].val.programmaticStreamSerializationAllowed = 1;
      ++na;
    }
    lc.attrs = na ? attr : nullptr;
    lc.numAttrs = na;
    void* args[] = {arg};
    const cudaError_t e = launch_result(cudaLaunchKernelExC(&lc, fn_, args));
    if (e != cudaSuccess)
      return Status(StatusCode::cuda_error, name_ + ": launch of " + std::to_string(lc.gridDim.x) + " blocks (cluster " +
                                                std::to_string(cluster) + ") failed: " + cudaGetErrorName(e) + ": " +
                                                cudaGetErrorString(e));
    return Status::Ok();
  }

  // The operands and dtypes of a launch (the fields every variant reads).
  static Params operands_of(const GemmArgs& a) {
    const Problem& p = a.p;
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
    prm.m = int(p.m);
    prm.out_dtype = int(p.out_dtype);
    prm.bias_kind = (p.has_bias && a.bias != nullptr) ? (p.bias_dtype == DType::fp32 ? 2 : 1) : 0;
    return prm;
  }

  // The row-stream kernels (skinny_rs_kernel.cuh): one block per SM, the plan of skinny_rs.h.
  Status run_rs(const GemmArgs& a, cudaStream_t stream) const {
    const Problem& p = a.p;
    RsParams rp;
    rp.op = operands_of(a);
    rp.plan = rs_plan(p.k, cfg_.max_m);
    const int sms = current_sm_count();
    rp.blocks = rs_blocks(p.n, std::min(rs_block_cap(sms), cfg_.rs_blocks > 0 ? cfg_.rs_blocks : sms));
    rp.group_stages_log2 = rs_group_stages_log2();
    rp.w_evict_first = rs_w_evict_first() ? 1 : 0;
    // Alone on its SM (kWsSoloSmemBytes, as the ws kernels: under PDL the next grid's blocks would otherwise share it).
    const int dyn = int(std::max<int64_t>(rs_smem_bytes(rp.plan, cfg_.max_m, int(p.m), rp.group_stages_log2), kWsSoloSmemBytes));
    const int dyn_max = int(rs_max_smem_bytes(cfg_.max_m));
    if (cudaError_t e = smem_optin_.ensure(fn_, dyn_max); e != cudaSuccess)
      return cuda_status(e, name_ + ": shared-memory opt-in failed");
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(unsigned(rp.blocks), 1, 1);
    lc.blockDim = dim3(unsigned(rs_threads(cfg_.max_m)), 1, 1);
    lc.dynamicSmemBytes = size_t(dyn);
    return launch(lc, stream, &rp, 1);
  }

  Config cfg_;
  std::string name_;
  Limits limits_;
  const void* fn_;
  SmemOptIn smem_optin_;  // the TMA variants' opt-in, once per device
};

int mtile_index(int max_m) {
  for (int i = 0; i < 4; ++i)
    if (kMTiles[i] == max_m) return i;
  return -1;
}

// Row of the default tables below for the problem's input dtype: 0 bf16, 1 fp16, -1 neither.
int dtype_index(const Problem& p) { return p.in_dtype == DType::bf16 ? 0 : p.in_dtype == DType::fp16 ? 1 : -1; }

}  // namespace
}  // namespace tgemm::skinny

namespace tgemm {

void add_skinny_kernels(BackendKernels& out) {
  out.backend = Backend::skinny;
  using skinny::Config;
  using skinny::SkinnyKernel;
  // auto_vec[dtype][mtile] and scalar[dtype]: what the default hands out.
  struct Defaults {
    const Kernel* auto_vec[2][4] = {};
    const Kernel* scalar[2] = {};
    const Kernel* ws_auto[2][3] = {};  // by kWsMTiles
  };
  auto defs = std::make_shared<Defaults>();

  // One family: the "auto" kernel (split chosen per problem) first, then one per fixed split it can launch.
  auto add_family = [&out](Config c, const void* fn, std::span<const int> fixed) {
    c.split_k = 0;
    auto k = std::make_unique<SkinnyKernel>(c, fn);
    const Kernel* auto_kernel = k.get();
    out.kernels.push_back(std::move(k));
    for (int sk : fixed) {
      if (sk > c.max_split()) continue;
      c.split_k = sk;
      out.kernels.push_back(std::make_unique<SkinnyKernel>(c, fn));
    }
    return auto_kernel;
  };

  const DType dtypes[2] = {DType::bf16, DType::fp16};
  for (int d = 0; d < 2; ++d) {
    const bool bf16 = dtypes[d] == DType::bf16;
    // Every registered configuration has its __global__ function (skinny_instances.cuh); a gap there would only show
    // as a failed launch, so registration refuses it.
    auto fn_of = [&](const Config& c) {
      const void* fn = bf16 ? skinny::kernel_bf16(c) : skinny::kernel_fp16(c);
      if (fn == nullptr) throw std::logic_error("tgemm: no skinny kernel function built for " + c.name());
      return fn;
    };
    Config base;
    base.in = dtypes[d];
    for (int mt : skinny::kMTiles) {
      Config c = base;
      c.max_m = mt;
      c.vec = true;
      defs->auto_vec[d][skinny::mtile_index(mt)] = add_family(c, fn_of(c), skinny::kFixedSplits);
    }
    {
      Config c = base;
      c.max_m = skinny::kTmaMTile;
      c.tma = true;
      add_family(c, fn_of(c), skinny::kTmaFixedSplits);
      c.ws = true;
      for (int i = 0; i < 3; ++i) {
        c.max_m = skinny::kWsMTiles[i];
        defs->ws_auto[d][i] = add_family(c, fn_of(c), skinny::kWsFixedSplits);
      }
      c.wg = true;
      c.split_k = skinny::kWsgWk;
      for (int mt : skinny::kWsgMTiles)
        for (int upw : skinny::kWsgUpw) {
          c.max_m = mt;
          c.upw = upw;
          out.kernels.push_back(std::make_unique<SkinnyKernel>(c, fn_of(c)));
        }
    }
    for (int mt : skinny::kRsMTiles)
      for (int cap : skinny::kRsBlockCaps) {
        Config c = base;
        c.max_m = mt;
        c.rs = true;
        c.rs_blocks = cap;
        out.kernels.push_back(std::make_unique<SkinnyKernel>(c, fn_of(c)));
      }
    Config c = base;
    c.max_m = skinny::kScalarMTile;
    c.vec = false;
    auto k = std::make_unique<SkinnyKernel>(c, fn_of(c));
    defs->scalar[d] = k.get();
    out.kernels.push_back(std::move(k));
  }

  // Untuned default for M <= 16: the 16-byte m16 kernel (split chosen per problem), then the element-load kernel for
  // what the 16-byte one cannot address (odd K / ld, unaligned). Not above M = 16: the m32 / m64 tiles lost to the
  // best sm90 kernel at M = 32 and 64 on every decode layer in run 18's tuning (up to 4x; `docs/decode_report.md`,
  // crossover table) and Nsight Compute (run 22) put skinny_bf16_m64 at 489 us against cuBLASLt's 60 us at
  // 64x28672x4096, so those M go to the sm90 / cuBLASLt defaults. The m32 / m64 kernels stay registered for the tuner.
  //
  // 16 < M <= 64: nothing before cuBLASLt either. Device call ws-4 (graph replay, the 12 decode layers at M = 32, 48,
  // 64, every ws kernel of M tile 32 and 64, wgmma): the best of them reached 0.51-0.98x cuBLASLt, never 1.0x
  // (scripts/dev/SKINNY_NOTES.md); they are the first fallbacks below. M tile 32 with mma.sync and WK 4 (run 69)
  // beats cuBLASLt on 4 of the 12 layers at M = 24 / 32 (3584x3584 and 4096x4096 by 8-9%) and loses up to 33% on
  // the others (4608x3584), too uneven for a rule without a table; a tuned table picks it where it wins.
  out.defaults = [defs](const Problem& p) -> std::vector<const Kernel*> {
    if (p.m < 1 || p.m > 16 || p.n < 1 || p.k < 1) return {};
    const int d = skinny::dtype_index(p);
    if (d < 0) return {};
    std::vector<const Kernel*> v;
    if (defs->ws_auto[d][0] && skinny::ws_preferred(p.m, p.n, p.k)) v.push_back(defs->ws_auto[d][0]);
    // M <= 8 also takes the m16 tile: its shallower load batches (depth 4 against 8) streamed W faster on the
    // H200 at every decode shape measured under graph replay (issue 4); rows past M add no W traffic.
    if (const Kernel* k = defs->auto_vec[d][skinny::mtile_index(16)]) v.push_back(k);
    if (defs->scalar[d]) v.push_back(defs->scalar[d]);
    return v;
  };
  // 16 < M <= 64: after cuBLASLt, the persistent kernel of M tile 64 (ws-4: at M = 32 it was as fast as the M tile 32
  // or faster on 10 of the 12 decode layers, e.g. 4096x14336 39.2 against 41.2 us, the other two within 2%; the
  // register ring's m32 / m64 tiles ran at 0.12-0.4x cuBLASLt), the smallest register-ring tile that holds M, then the
  // element-load kernel, for what neither sm90 nor cuBLASLt can run (e.g. an fp32 bias with a 16-bit output and a
  // leading dimension that is not a multiple of 8, GPU test Dispatch.MmMatchesHostReferenceOnOddShapes).
  out.fallbacks = [defs](const Problem& p) -> std::vector<const Kernel*> {
    if (p.m <= 16 || p.m > 64 || p.n < 1 || p.k < 1) return {};
    const int d = skinny::dtype_index(p);
    if (d < 0) return {};
    std::vector<const Kernel*> v;
    if (const Kernel* k = defs->ws_auto[d][2]) v.push_back(k);
    if (const Kernel* k = defs->auto_vec[d][skinny::mtile_index(p.m <= 32 ? 32 : 64)]) v.push_back(k);
    if (defs->scalar[d]) v.push_back(defs->scalar[d]);
    return v;
  };
}

}  // namespace tgemm
