// The safety proofs: the seed incident reproduced (`tgemm repro`) and the boundary sweep of every declared
// limit (`tgemm check`). Shared by the CLI and the GPU tests.
#pragma once

#include <string>
#include <vector>

#include "bench/operands.h"
#include "table/table.h"
#include "tgemm/tgemm.h"

namespace tgemm::bench {

// One boundary case: a problem just inside or just outside one declared limit of one kernel.
struct SweepCase {
  const Kernel* kernel = nullptr;
  std::string limit;    // which limit, with the numbers
  bool inside = true;   // inside the limit: the kernel must take it whole
  Shape shape;
  size_t expect_pieces = 1;  // what the declared limits predict for the plan on this kernel
};

struct SweepResult {
  SweepCase c;
  bool ok = false;
  std::string plan;          // kernel x pieces actually planned
  size_t pieces = 0;
  int64_t guard_bytes_changed = 0;  // around X, W, bias and Y
  int64_t unwritten_rows = 0;
  Compare cmp;
  std::string error;         // why not ok
  std::string refused;       // ok, but the kernel declined the case for a reason other than its limits (nothing ran)
};

// The cases the declared limits of `k` call for (int32 offsets at their bound, max M, M·N around 2^32,
// X and W spans around 4 GiB).
std::vector<SweepCase> sweep_cases(const Kernel& k);
// Plans the case through the dispatcher with `k` forced first, runs it with guarded, poisoned operands and
// checks everything. Never throws; a CUDA error ends up in `error`.
Status run_sweep_case(Dispatcher& d, const SweepCase& c, cudaStream_t stream, SweepResult* out);

// `tgemm repro`: one row per M of the seed's table.
struct ReproRow {
  int64_t m = 0;
  bool above = false;            // M*N >= 2^31
  std::string kernel;            // the int32 kernel, run with the limit check bypassed
  double bypass_tflops = 0;      // below the limit only (timed)
  int64_t bytes_outside = 0;     // guard bytes around Y the bypassed kernel changed
  int64_t rows_unwritten = 0;    // rows of Y it never wrote
  Compare bypass_cmp;            // its result against the reference (sampled rows)
  std::string plan;              // the dispatcher's plan for the same problem
  size_t pieces = 0;
  double plan_tflops = 0;
  double plan_x_cublaslt = 0;
  Compare plan_cmp;
  int64_t plan_guard_bytes = 0, plan_rows_unwritten = 0;
  double cublaslt_tflops = 0;
  std::string error;
};

// `kernel` is the int32-offset kernel the seed's table maps M=8192 to; `table_path` a table holding that row.
Status run_repro_row(const Kernel& kernel, const std::string& table_path, int64_t m, cudaStream_t stream, ReproRow* out);

// The int32 twin of the configuration the heuristic picks for the seed's M=8192 row.
const Kernel* repro_default_kernel();

}  // namespace tgemm::bench
