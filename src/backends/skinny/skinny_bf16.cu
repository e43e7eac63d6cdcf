// skinny backend: the bf16 instantiations (skinny_instances.cuh).
#include "backends/skinny/skinny_instances.cuh"

namespace tgemm::skinny {
const void* kernel_bf16(const Config& c) { return kernel_for<__nv_bfloat16>(c); }
}  // namespace tgemm::skinny
