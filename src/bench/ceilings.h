#pragma once

#include <cuda_runtime_api.h>

#include "tgemm/types.h"

namespace tgemm::bench {

struct Ceilings {
  double copy_gbps = 0;     // device-to-device copy, bytes read + written per second / 1e9
  double gemm_tflops = 0;   // cuBLASLt bf16 8192^3 on random data
};

// Measures both ceilings on the current device (about a second).
Status measure_ceilings(cudaStream_t stream, Ceilings* out);

}  // namespace tgemm::bench
