// What the sm90 family's registration, its default heuristic and the tests know about a registered sm90 kernel
// beyond the Kernel interface. Plain C++ (no device code), so host-only files can include it.
#pragma once

#include <cstdint>
#include <string>

#include "backends/sm90/sm90_config.h"
#include "backends/sm90/sm90_split_plan.h"
#include "tgemm/kernel.h"

namespace tgemm::sm90 {

// What every sm90 kernel shares (both skeletons: sm90_kernel.cuh and sm90_swapab.cuh), and what the defaults
// heuristic and the tests need to know beyond the Kernel interface.
class Sm90KernelBase : public Kernel {
 public:
  // The Limits both skeletons share: X and W through TMA (only TMA's limits apply to them), 16-byte aligned
  // pointers and leading dimensions of multiples of 8 elements (TMA strides), every output dtype, bias in the input
  // dtype or fp32 (read element by element), K > 0 (the first k-step's wgmma initialises the accumulators).
  Sm90KernelBase(const Config& c, int64_t tile_m, int64_t tile_n, bool column_tail = false)
      : config_(c), name_(config_name(c)), column_tail_(column_tail) {
    lim_.y_index_bits = c.index_bits;
    lim_.x_index_bits = 64;
    lim_.w_index_bits = 64;
    lim_.uses_tma = true;
    lim_.ld_multiple = 8;
    lim_.ptr_align = 16;
    lim_.bias_align = 2;  // an fp32 bias needs 4 (check_common)
    lim_.tile_m = tile_m;
    lim_.tile_n = tile_n;
    lim_.in_dtypes = dtype_bit(c.in);
    lim_.out_dtypes = dtype_bit(DType::bf16) | dtype_bit(DType::fp16) | dtype_bit(DType::fp32);
    lim_.bias_same_as_input = true;
    lim_.bias_fp32 = true;
    lim_.k_zero = false;
  }
  const Config& config() const { return config_; }
  const std::string& name() const override { return name_; }
  Backend backend() const override { return Backend::sm90; }
  const Limits& limits() const override { return lim_; }
  // Whether a split plan may divide tiles by columns (SplitPlan::by_columns; Traits::kColumnTail).
  bool column_tail() const { return column_tail_; }
  // A development twin (TGEMM_SM90_L2_TWINS): timed by name only, never offered by the untuned default.
  bool dev_twin() const { return dev_twin_; }
  // Split-K configurations: the split plan `run` picks for a problem (no split for the others), with the model's
  // efficiency of it (choose_splits), which the untuned default scores tails by.
  virtual SplitChoice split_choice(const Problem&) const { return {}; }
  virtual SplitPlan split_plan(const Problem& p) const {
    const SplitChoice c = split_choice(p);
    return {c.splits, c.split_tiles, c.by_columns};
  }
  // `run` with a given split plan (development harness, tests); the persistent skeleton's split-K needs
  // splitk_workspace_bytes of workspace.
  virtual Status run_splits(const GemmArgs& args, void* ws, size_t ws_bytes, SplitPlan plan,
                            cudaStream_t stream) const = 0;

 protected:
  // check_limits, and an fp32 bias's 4-byte alignment (Limits has one bias alignment for both bias dtypes).
  Verdict check_common(const Problem& p) const {
    Verdict v = check_limits(lim_, p);
    if (v.ok() && p.has_bias && p.bias_dtype == DType::fp32 && p.align_bias < 4)
      return {Verdict::Kind::unsupported, "fp32 bias pointer aligned to " + std::to_string(p.align_bias) + " bytes < 4 required"};
    return v;
  }
  Config config_;
  std::string name_;
  bool column_tail_;
  bool dev_twin_ = false;
  Limits lim_;
};

}  // namespace tgemm::sm90
