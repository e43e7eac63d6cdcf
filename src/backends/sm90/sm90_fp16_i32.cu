// Instantiates the fp16 sm90 configurations with 32-bit Y offsets (see sm90_configs.h).
#include "backends/sm90/sm90_configs.h"
#include "backends/sm90/sm90_launch.cuh"

namespace tgemm::sm90 {

TGEMM_SM90_INSTANTIATE(add_fp16_i32, TGEMM_SM90_FP16_CONFIGS, 32)

}  // namespace tgemm::sm90
