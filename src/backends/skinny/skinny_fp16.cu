// skinny backend: the fp16 instantiations (skinny_instances.cuh).
#include "backends/skinny/skinny_instances.cuh"

namespace tgemm::skinny {
const void* kernel_fp16(const Config& c) { return kernel_for<__half>(c); }
}  // namespace tgemm::skinny
