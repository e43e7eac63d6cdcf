// Tuning one shape: every candidate that can implement it, checked against the reference, then timed
// interleaved by the one benchmark routine. The tune command runs this in worker processes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench/operands.h"
#include "bench/timing.h"
#include "table/table.h"
#include "tgemm/tgemm.h"

namespace tgemm::bench {

struct TuneOptions {
  std::vector<Backend> backends = {Backend::sm90, Backend::skinny, Backend::cublaslt};
  TimingOptions timing{10, 50, TimingMode::graph};
  double max_err_ratio = 0.05;
  std::vector<std::string> skip;  // kernels known to fault or hang on this shape
};

struct CandidateResult {
  std::string kernel;
  Backend backend = Backend::cublaslt;
  int pieces = 1;         // > 1: the kernel cannot address the whole problem and ran as the dispatcher splits it
  bool ok = false;        // ran, and err_ratio within the limit
  double us = 0;
  double err_ratio = 1, rel_l2 = 0, max_rel = 0;
  std::string note;       // why not ok
};

// One plan per kernel of the chosen backends that can run `p`: whole, or split into the pieces the dispatcher
// would make for it (a table row naming a kernel that cannot address the whole problem runs split).
std::vector<Plan> tune_candidates(const Dispatcher& d, const Problem& p, const DeviceInfo& dev, const TuneOptions& opt);

// `on_begin(kernel)` is called before each candidate first runs (a worker prints it, so a parent that sees
// the worker die knows which candidate did it).
Status tune_shape(const Shape& s, const TuneOptions& opt, cudaStream_t stream, std::vector<CandidateResult>* out,
                  const std::function<void(const std::string&)>& on_begin = {});

// The fastest candidate that passed, as a table row for this device; false if none passed.
bool best_row(const Shape& s, const std::vector<CandidateResult>& results, const DeviceInfo& dev, TableRow* row);

}  // namespace tgemm::bench
