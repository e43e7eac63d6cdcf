// tgemm: Y[M,N] = X[M,K] · W[N,K]ᵀ (+ bias[N]), the F.linear contract, on Hopper.
//
//   tgemm::MatrixView x{x_ptr, M, K, K, tgemm::DType::bf16};
//   tgemm::MatrixView w{w_ptr, N, K, K, tgemm::DType::bf16};
//   tgemm::MatrixView y{y_ptr, M, N, N, tgemm::DType::bf16};
//   tgemm::VectorView b{bias_ptr, N, tgemm::DType::bf16};
//   tgemm::Status s = tgemm::mm(x, w, &b, y, stream);
//
// Every call checks the chosen kernel's addressing limits on the real problem; a problem too big for it is
// split into pieces it can address. Errors come back as a Status naming the offending argument.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "tgemm/kernel.h"
#include "tgemm/types.h"

namespace tgemm {

// One launch of a plan: rows [m0, m0+m) and columns [n0, n0+n) of Y.
struct Piece {
  int64_t m0 = 0, m = 0, n0 = 0, n = 0;
};

// How the kernels of a plan will be launched. Short kernels rank differently in the two: under CUDA-graph replay the
// launches follow each other without a gap (and our kernels overlap their start with the previous one's end, PDL),
// while launched one by one each pays the launch itself (session 49: 3.1-3.4 us added to cuBLASLt's, 4.1-4.9 us to the
// skinny ws kernels'). The tuned tables are timed in graph replay; tables whose file name ends in "_eager.csv" are
// timed with plain launches (`tgemm tune --timing plain`) and come first for launches outside a capture.
enum class LaunchMode : uint8_t { graph, eager };

// What the dispatcher decided for one problem, and why.
struct Plan {
  Problem problem;                  // what it was made for
  Status status;                    // not ok: nothing can run this problem (the message says why)
  const Kernel* kernel = nullptr;
  std::vector<Piece> pieces;        // one for an unsplit plan
  size_t workspace_bytes = 0;       // per piece, pieces run in order on one stream
  std::vector<std::string> chain;   // the decision chain, one step a line
  std::string source;               // "table <file>:<line>", "heuristic", "forced"
  LaunchMode mode = LaunchMode::graph;  // the launches it was made for
  // A graph plan whose shape has an eager-table row naming another kernel: mm plans an eager launch apart.
  bool eager_differs = false;
  std::string to_string() const;    // the chain and the final plan, for `tgemm explain`
};

// Which GPU a plan is for: the tuned table is keyed on it.
struct DeviceInfo {
  std::string arch = "sm90";  // "sm" + major + minor
  int sm_count = 132;
  static DeviceInfo current();  // of the current CUDA device; fails over to the default when there is none
};

struct DispatcherOptions {
  // Tuned tables to load, in order; empty means TGEMM_CONFIG if set, else the shipped configs/ tables. A file whose
  // name ends in "_eager.csv" holds rows for launches outside a CUDA-graph capture (LaunchMode::eager).
  std::vector<std::string> table_paths;
  bool load_default_tables = true;
  // Append each new shape to this untuned-shape CSV (TGEMM_UNTUNED_LOG). Empty: env or off.
  std::string untuned_log;
  // Log each new plan once to stderr (TGEMM_LOG=1).
  bool log_plans = false;
};

class Dispatcher {
 public:
  // The process-wide dispatcher, configured from the environment on first use.
  static Dispatcher& global();
  static Status create(const DispatcherOptions& opts, std::unique_ptr<Dispatcher>* out);
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Y = X·Wᵀ (+ bias) on `stream`. After the first call of a shape on a stream it allocates nothing
  // and never synchronises (capturable in a CUDA graph). Where an eager table has a row for the shape, it asks
  // whether `stream` is capturing (cudaStreamIsCapturing) and plans the launch for that mode.
  Status mm(const MatrixView& x, const MatrixView& w, const VectorView* bias, const MatrixView& y,
            cudaStream_t stream);

  // Everything mm does before it launches: validation, the cached plan, the stream's workspace. An engine
  // can call it at start-up to check a shape; the host-overhead benchmark times it.
  struct Resolved {
    const Plan* plan = nullptr;  // null for an empty problem or K = 0 (no kernel needed)
    GemmArgs args;
    void* workspace = nullptr;  // the stream's; for cudaStreamPerThread valid until the calling thread exits
    int device = 0;
  };
  Status resolve(const MatrixView& x, const MatrixView& w, const VectorView* bias, const MatrixView& y, cudaStream_t stream,
                 Resolved* out);

  // Runs exactly `kernel` on the problem. Checks its limits unless `bypass_limits` — which exists only for
  // `tgemm repro` and the tests that prove what happens without the check.
  Status run_kernel(const Kernel& kernel, const MatrixView& x, const MatrixView& w, const VectorView* bias,
                    const MatrixView& y, cudaStream_t stream, bool bypass_limits = false);

  // Runs a plan made by make_plan (e.g. a forced kernel, possibly split) on operands of its problem.
  Status run_plan(const Plan& plan, const MatrixView& x, const MatrixView& w, const VectorView* bias, const MatrixView& y,
                  cudaStream_t stream);

  // The cached plan for a problem on `dev` (builds it on first use) and launch mode. Thread-safe.
  const Plan& plan(const Problem& p, const DeviceInfo& dev, LaunchMode mode = LaunchMode::graph);
  // A fresh plan; `forced` names a kernel to consider first (explain --kernel).
  Plan make_plan(const Problem& p, const DeviceInfo& dev, const std::string& forced = "",
                 LaunchMode mode = LaunchMode::graph) const;

  // Replaces the tuned tables (merging in order). Clears the plan cache.
  Status load_tables(const std::vector<std::string>& paths);
  std::string tables_summary() const;  // which files, rows loaded, rows skipped for other archs
  // Not ok when the tables named at creation (TGEMM_CONFIG for the global dispatcher) failed to load; every mm
  // then returns this error.
  Status table_status() const;
  size_t plan_cache_size() const;
  // Device memory held for stream workspaces and split counters, over every device and stream. A stream's
  // workspace is kept until the dispatcher is destroyed; a cudaStreamPerThread workspace until its thread exits.
  size_t workspace_bytes() const;

  struct Impl;

 private:
  explicit Dispatcher(std::unique_ptr<Impl> impl);
  Status execute(const Plan& plan, const GemmArgs& args, int device, cudaStream_t stream);
  Status launch(const Plan& plan, const GemmArgs& args, void* workspace, cudaStream_t stream);
  std::unique_ptr<Impl> impl_;
};

// Validates views and builds the Problem (alignment from the pointers). The message names the argument.
Status make_problem(const MatrixView& x, const MatrixView& w, const VectorView* bias, const MatrixView& y,
                    Problem* out);

// The global dispatcher's mm.
inline Status mm(const MatrixView& x, const MatrixView& w, const VectorView* bias, const MatrixView& y,
                 cudaStream_t stream = nullptr) {
  return Dispatcher::global().mm(x, w, bias, y, stream);
}

// Every registered kernel.
std::vector<const Kernel*> kernels();
const Kernel* find_kernel(const std::string& name);

}  // namespace tgemm
