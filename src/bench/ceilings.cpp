#include "bench/ceilings.h"

#include "bench/problem_bench.h"
#include "core/cuda_status.h"
#include "registry/registry.h"

namespace tgemm::bench {

Status measure_ceilings(cudaStream_t stream, Ceilings* out) {
  const size_t bytes = size_t(2) << 30;
  DeviceMem a, b;
  if (Status s = DeviceMem::make(bytes, &a); !s.ok()) return s;
  if (Status s = DeviceMem::make(bytes, &b); !s.ok()) return s;
  if (Status s = fill_random(a.get(), DType::bf16, int64_t(bytes / 2), 7, stream); !s.ok()) return s;
  std::vector<Timing> t;
  Launch copy = [&](int, cudaStream_t s) {
    cudaError_t e = cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, s);
    return cuda_status(e, "copy");
  };
  if (Status s = time_interleaved({copy}, 1, {3, 10}, stream, &t); !s.ok()) return s;
  out->copy_gbps = 2.0 * double(bytes) / (t[0].median_us * 1e-6) / 1e9;

  Operands o;
  Shape sh{8192, 8192, 8192, false, DType::bf16, DType::bf16, false, false};
  if (Status s = Operands::make(sh, 11, stream, &o); !s.ok()) return s;
  std::unique_ptr<Dispatcher> d;
  DispatcherOptions opts;
  opts.load_default_tables = false;
  if (Status s = Dispatcher::create(opts, &d); !s.ok()) return s;
  if (Status s = time_interleaved({launch_kernel(*d, *Registry::get().cublaslt(), o)}, o.rotations, {3, 10}, stream, &t); !s.ok()) return s;
  if (!t[0].ok) return t[0].status;
  out->gemm_tflops = 2.0 * 8192.0 * 8192.0 * 8192.0 / (t[0].median_us * 1e-6) / 1e12;
  return Status::Ok();
}

}  // namespace tgemm::bench
