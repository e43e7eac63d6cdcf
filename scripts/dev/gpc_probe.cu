// Which SMs share a GPC, and whether the blocks of a one-block-per-SM stream finish by GPC (session 42).
//
// Why: stream_probe.cu streamed 32 MiB at 88.8% of copy with 128 blocks and 75.6% with 132 (session 33, unexplained),
// and the row-stream kernels' 128-block variants are faster than their one-block-per-SM twins at 32-48 MiB. If each
// GPC's share of the DRAM bandwidth is fixed, equal work per SM leaves the SMs of the larger GPCs last.
//
//   nvcc -O3 -std=c++20 -Isrc -gencode=arch=compute_90a,code=sm_90a scripts/dev/gpc_probe.cu -o /tmp/gpc_probe
//   /tmp/gpc_probe [MiB per launch, default 32] > gpc.txt
//
// 1. cudaOccupancyMaxActiveClusters for cluster sizes 1..16 of a block that fills an SM: sum over GPCs of
//    floor(SMs in the GPC / size).
// 2. Clusters of 16, then of 2, launched once: the SMs of each cluster (a cluster never spans GPCs).
// 3. A stream of W bytes over `blocks` blocks (132 and 128), contiguous equal shares, rotated over buffers past the
//    L2: each block's %smid and its finish time after the launch's first block started, averaged per SM.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <vector>

#include "core/ptx.cuh"  // nvcc -Isrc

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

using tgemm::ptx::globaltimer;
using tgemm::ptx::smid;

constexpr int kFillSmem = 200 * 1024;  // one block per SM

__global__ void where(int* out) {
  extern __shared__ char pad[];
  if (threadIdx.x == 0) {
    out[blockIdx.x] = int(smid());
    pad[0] = 0;
  }
}

// Block b reads words [b * per, (b + 1) * per) of src (16-byte words, 4 loads in flight per thread).
__global__ void __launch_bounds__(512) stream(const uint4* __restrict__ src, int64_t per, uint64_t* t, int* sm,
                                              uint32_t* sink) {
  extern __shared__ char pad[];
  const uint64_t t0 = globaltimer();
  const uint4* p = src + blockIdx.x * per;
  uint32_t acc = 0;
  for (int64_t i = threadIdx.x; i < per; i += 4 * 512) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = i + j * 512 < per ? __ldcs(p + i + j * 512) : uint4{};
#pragma unroll
    for (int j = 0; j < 4; ++j) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  if (acc == 0x12345678u) sink[0] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    t[2 * blockIdx.x] = t0;
    t[2 * blockIdx.x + 1] = globaltimer();
    sm[blockIdx.x] = int(smid());
    pad[0] = 0;
  }
}

// A launch of `where` (32 threads, an SM's worth of shared memory) in clusters of `c` blocks, `grid` blocks in all.
struct ClusterLaunch {
  cudaLaunchConfig_t lc = {};
  cudaLaunchAttribute at[1] = {};
  ClusterLaunch(int c, int grid) {
    lc.gridDim = dim3(grid, 1, 1);
    lc.blockDim = dim3(32, 1, 1);
    lc.dynamicSmemBytes = kFillSmem;
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = c;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    lc.attrs = at;
    lc.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;  // lc points into at
};

int main(int argc, char** argv) {
  const int mib = argc > 1 ? std::atoi(argv[1]) : 32;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, kFillSmem));
  CK(cudaFuncSetAttribute(where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CK(cudaFuncSetAttribute(stream, cudaFuncAttributeMaxDynamicSharedMemorySize, kFillSmem));
  std::printf("sms %d\n", sms);

  // 1. Clusters that fit, by size.
  for (int c = 1; c <= 16; ++c) {
    ClusterLaunch cl(c, c * 64);
    int n = 0;
    cudaError_t e = cudaOccupancyMaxActiveClusters(&n, where, &cl.lc);
    std::printf("max_active_clusters size %2d: %d%s\n", c, n, e == cudaSuccess ? "" : " (error)");
    cudaGetLastError();
  }

  // 2. The SMs of each cluster.
  int* d_out;
  CK(cudaMalloc(&d_out, 4096 * sizeof(int)));
  for (int c : {16, 8, 2}) {
    int n = 0;
    ClusterLaunch cl(c, c);
    CK(cudaOccupancyMaxActiveClusters(&n, where, &cl.lc));
    cl.lc.gridDim = dim3(c * n, 1, 1);
    CK(cudaMemset(d_out, 0xff, 4096 * sizeof(int)));
    CK(cudaLaunchKernelEx(&cl.lc, where, d_out));
    CK(cudaDeviceSynchronize());
    std::vector<int> h(c * n);
    CK(cudaMemcpy(h.data(), d_out, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (int q = 0; q < n; ++q) {
      std::printf("cluster%d %d:", c, q);
      std::vector<int> v(h.begin() + q * c, h.begin() + (q + 1) * c);
      std::sort(v.begin(), v.end());
      for (int s : v) std::printf(" %d", s);
      std::printf("\n");
    }
  }

  // 3. Finish times by SM.
  const int64_t bytes = int64_t(mib) << 20;
  const int nbuf = std::max<int64_t>(2, (int64_t(256) << 20) / bytes + 1);
  std::vector<uint4*> bufs(nbuf);
  for (auto& b : bufs) {
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(b, 1, bytes));
  }
  uint64_t* d_t;
  int* d_sm;
  uint32_t* d_sink;
  CK(cudaMalloc(&d_t, 2 * 4096 * sizeof(uint64_t)));
  CK(cudaMalloc(&d_sm, 4096 * sizeof(int)));
  CK(cudaMalloc(&d_sink, 4));
  for (int blocks : {sms, 128, sms, 128}) {
    const int64_t per = bytes / 16 / blocks;
    std::map<int, std::pair<double, int>> fin;  // smid -> (sum of finish - launch start, count)
    std::vector<double> spans;
    const int reps = 40;
    for (int r = 0; r < reps + 3; ++r) {
      stream<<<blocks, 512, kFillSmem>>>(bufs[r % nbuf], per, d_t, d_sm, d_sink);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      if (r < 3) continue;
      std::vector<uint64_t> t(2 * blocks);
      std::vector<int> s(blocks);
      CK(cudaMemcpy(t.data(), d_t, t.size() * 8, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(s.data(), d_sm, s.size() * 4, cudaMemcpyDeviceToHost));
      uint64_t t0 = ~0ull, t1 = 0;
      for (int b = 0; b < blocks; ++b) t0 = std::min(t0, t[2 * b]), t1 = std::max(t1, t[2 * b + 1]);
      spans.push_back((t1 - t0) * 1e-3);
      for (int b = 0; b < blocks; ++b) {
        auto& f = fin[s[b]];
        f.first += (t[2 * b + 1] - t0) * 1e-3;
        f.second += 1;
      }
    }
    std::sort(spans.begin(), spans.end());
    std::printf("stream blocks %d MiB %d: span median %.2f us (%.0f GB/s)\n", blocks, mib, spans[spans.size() / 2],
                double(bytes) / (spans[spans.size() / 2] * 1e3));
    std::printf("finish_by_sm blocks %d:", blocks);
    for (auto& [s, f] : fin) std::printf(" %d:%.2f", s, f.first / f.second);
    std::printf("\n");
  }
  return 0;
}
