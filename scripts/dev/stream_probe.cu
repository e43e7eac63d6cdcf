// What a plain streaming kernel gets at the decode layers' sizes: the context of issue 4's "85% of the copy
// bandwidth" target, which divides a layer's bytes by its time and compares with a 2 GB device-to-device copy.
// For each size S: (a) a read-only kernel summing S bytes with 16-byte loads, (b) cudaMemcpyAsync of S / 2 bytes
// (S bytes moved), both as CUDA graphs of back-to-back launches over buffers rotated past the L2, as `tgemm bench
// --timing graph` does. Prints GB/s and the % of the 2 GB copy's rate.
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a scripts/dev/stream_probe.cu -o stream_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

// Four independent 16-byte loads in flight per thread per iteration; the xor keeps them live.
__global__ void __launch_bounds__(512) read_all(const uint4* __restrict__ p, size_t n, unsigned* out) {
  unsigned acc = 0;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride), d = __ldcs(p + i + 3 * stride);
    acc ^= a.x ^ b.y ^ c.z ^ d.w;
  }
  for (; i < n; i += stride) acc ^= __ldcs(p + i).x;
  if (acc == 0x12345678u) out[blockIdx.x] = acc;  // practically never: no store traffic
}

template <class F>
float graph_us(F&& enqueue, int launches, cudaStream_t s) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  for (int i = 0; i < launches; ++i) enqueue(i, s);
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&ge, g, 0);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaGraphLaunch(ge, s);  // warm-up and upload
  std::vector<float> t;
  for (int r = 0; r < 15; ++r) {
    cudaEventRecord(e0, s);
    cudaGraphLaunch(ge, s);
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(ms * 1e3f / launches);
  }
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t pool = size_t(4) << 30;  // rotated through: every size's buffers together exceed the 60 MB L2
  char *src = nullptr, *dst = nullptr;
  unsigned* out = nullptr;
  CK(cudaMalloc(&src, pool));
  CK(cudaMalloc(&dst, pool));
  CK(cudaMalloc(&out, 1 << 20));
  CK(cudaMemset(src, 1, pool));
  const double mb = 1 << 20;
  double ref = 0;
  std::printf("size_MB,read_us,read_GBps,read_pct_copy2G,copy_us,copy_GBps,copy_pct_copy2G\n");
  for (size_t bytes : {size_t(2) << 30, size_t(16) << 20, size_t(21) << 20, size_t(28) << 20, size_t(32) << 20,
                       size_t(48) << 20, size_t(56) << 20, size_t(64) << 20, size_t(112) << 20, size_t(136) << 20,
                       size_t(224) << 20, size_t(272) << 20}) {
    const int sets = int(std::max<size_t>(2, std::min<size_t>(pool / bytes, (size_t(256) << 20) / bytes + 2)));
    const int launches = std::max(sets, int(std::min<size_t>(512, (size_t(2) << 30) / bytes)) / sets * sets);
    const float rd = graph_us([&](int i, cudaStream_t st) {
      read_all<<<sms * 4, 512, 0, st>>>(reinterpret_cast<const uint4*>(src + size_t(i % sets) * bytes), bytes / 16, out);
    }, launches, s);
    const float cp = graph_us([&](int i, cudaStream_t st) {
      cudaMemcpyAsync(dst + size_t(i % sets) * (bytes / 2), src + size_t(i % sets) * (bytes / 2), bytes / 2,
                      cudaMemcpyDeviceToDevice, st);
    }, launches, s);
    CK(cudaGetLastError());
    const double rgb = bytes / (rd * 1e-6) / 1e9, cgb = bytes / (cp * 1e-6) / 1e9;
    if (ref == 0) ref = cgb;  // the 2 GB copy (read + write), as `tgemm bench`'s ceiling
    std::printf("%.0f,%.2f,%.0f,%.1f,%.2f,%.0f,%.1f\n", bytes / mb, rd, rgb, 100 * rgb / ref, cp, cgb, 100 * cgb / ref);
  }
  return 0;
}
