// Does a kernel that needs most of the shared memory pay for following one that needs none? Plain stream launches,
// events around each launch (as `tgemm bench --timing plain`), medians in microseconds, for each (predecessor,
// kernel) pair: big = 200 KB dynamic shared memory per block, small = none; both 132 blocks doing nothing else.
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a scripts/dev/carveout_probe.cu -o /tmp/cp && /tmp/cp
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

__global__ void big_kernel(int* out) {
  extern __shared__ int smem[];
  smem[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (smem[(threadIdx.x + 1) % blockDim.x] == -1) out[0] = 1;
}
__global__ void small_kernel(int* out) {
  if (threadIdx.x == 12345) out[0] = 1;
}

int main() {
  int* out;
  cudaMalloc(&out, 4);
  const int big = 200 * 1024;
  cudaFuncSetAttribute(big_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, big);
  cudaStream_t s;
  cudaStreamCreate(&s);
  auto launch = [&](bool b) {
    if (b) big_kernel<<<132, 288, big, s>>>(out);
    else small_kernel<<<132, 256, 0, s>>>(out);
  };
  const int iters = 400;
  std::vector<cudaEvent_t> ev(2 * iters);
  for (auto& e : ev) cudaEventCreate(&e);
  const char* name[2] = {"small", "big"};
  for (int warm = 0; warm < 2; ++warm)
    for (int prev = 0; prev < 2; ++prev)
      for (int cur = 0; cur < 2; ++cur) {
        for (int i = 0; i < iters; ++i) {
          launch(prev);
          cudaEventRecord(ev[2 * i], s);
          launch(cur);
          cudaEventRecord(ev[2 * i + 1], s);
        }
        cudaStreamSynchronize(s);
        std::vector<float> t(iters);
        for (int i = 0; i < iters; ++i) cudaEventElapsedTime(&t[i], ev[2 * i], ev[2 * i + 1]);
        std::sort(t.begin(), t.end());
        if (warm) std::printf("%-5s after %-5s: median %.2f us, p10 %.2f, p90 %.2f\n", name[cur], name[prev],
                              1e3 * t[iters / 2], 1e3 * t[iters / 10], 1e3 * t[iters * 9 / 10]);
      }
  std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
