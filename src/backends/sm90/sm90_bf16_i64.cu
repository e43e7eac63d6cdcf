// Instantiates the bf16 sm90 configurations with 64-bit Y offsets (see sm90_configs.h).
#include "backends/sm90/sm90_configs.h"
#include "backends/sm90/sm90_launch.cuh"

namespace tgemm::sm90 {

TGEMM_SM90_INSTANTIATE(add_bf16_i64, TGEMM_SM90_BF16_CONFIGS, 64)

}  // namespace tgemm::sm90
