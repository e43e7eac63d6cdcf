// The one benchmark routine: the bench command, the tuner and the tests all time through it.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "tgemm/types.h"

namespace tgemm::bench {

// Enqueues one run on `stream` using operand set `rotation` (of `rotations`).
using Launch = std::function<Status(int rotation, cudaStream_t stream)>;

struct TimingOptions {
  int warmup = 5;
  int iters = 30;
};

struct Timing {
  double median_us = 0, min_us = 0;
  double ratio_vs_first = 1;  // median over iterations of (this / launches[0]) from the same round
  bool ok = false;
  Status status;
};

// Times the launches interleaved (A B C A B C ...), each sample bracketed by events, so that drift of the
// card's clocks hits every launch alike. A launch that fails is reported and left out of later rounds.
Status time_interleaved(const std::vector<Launch>& launches, int rotations, const TimingOptions& opt, cudaStream_t stream,
                        std::vector<Timing>* out);

double median(std::vector<double> v);

}  // namespace tgemm::bench
