#include "backends/reference/reference.h"

#include <string>

#include "core/cuda_status.h"
#include "core/dtype.cuh"
#include "core/launch_error.h"
#include "registry/registry.h"

namespace tgemm {

namespace reference {

namespace {

constexpr int kTile = 64, kTileK = 16, kThreads = 256;  // 64x64 tile, 4x4 outputs per thread

// out[r, c] for r in [row0, row0+rows): acc over K in fp32, all offsets int64.
template <class In, class Bias, class Out>
__global__ void __launch_bounds__(kThreads) gemm_kernel(const In* __restrict__ x, const In* __restrict__ w,
                                                        const Bias* __restrict__ bias, Out* __restrict__ y, int64_t m,
                                                        int64_t n, int64_t k, int64_t ldx, int64_t ldw, int64_t ldy) {
  __shared__ float xs[kTileK][kTile + 1];
  __shared__ float ws[kTileK][kTile + 1];
  const int64_t tiles_n = (n + kTile - 1) / kTile;
  const int64_t tile = int64_t(blockIdx.x);
  const int64_t row0 = (tile / tiles_n) * kTile, col0 = (tile % tiles_n) * kTile;
  const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < k; k0 += kTileK) {
    for (int i = threadIdx.x; i < kTile * kTileK; i += kThreads) {
      int r = i / kTileK, kk = i % kTileK;
      int64_t gr = row0 + r, gc = col0 + r, gk = k0 + kk;
      xs[kk][r] = (gr < m && gk < k) ? to_float(x[gr * ldx + gk]) : 0.f;
      ws[kk][r] = (gc < n && gk < k) ? to_float(w[gc * ldw + gk]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk)
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(xs[kk][tr + 16 * i], ws[kk][tc + 16 * j], acc[i][j]);
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int64_t r = row0 + tr + 16 * i, c = col0 + tc + 16 * j;
      if (r < m && c < n) {
        float v = acc[i][j] + (bias ? to_float(bias[c]) : 0.f);
        y[r * ldy + c] = from_float<Out>(v);
      }
    }
}

template <class Bias, class Out>
__global__ void fill_kernel(const Bias* __restrict__ bias, Out* __restrict__ y, int64_t m, int64_t n, int64_t ldy) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < m * n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = i / n, c = i % n;
    y[r * ldy + c] = from_float<Out>(bias ? to_float(bias[c]) : 0.f);
  }
}

// Grids index tiles with blockIdx.x (up to 2^31-1 blocks): no row limit below int64 in practice.
constexpr int64_t kMaxBlocks = 2147483647;

template <class Out>
Status gemm_typed(const GemmArgs& a, int64_t row0, int64_t rows, Out* y, int64_t ldy, cudaStream_t stream) {
  const Problem& p = a.p;
  int64_t tiles = ((rows + kTile - 1) / kTile) * ((p.n + kTile - 1) / kTile);
  if (tiles > kMaxBlocks) return {StatusCode::not_supported, "reference: too many tiles"};
  if (tiles == 0) return Status::Ok();
  return visit_dtype(p.in_dtype, [&]<class In>() {
    const In* x = static_cast<const In*>(a.x) + row0 * p.ldx;
    const In* w = static_cast<const In*>(a.w);
    auto go = [&]<class Bias>(const Bias* bias) {
      return cuda_status(launch_plain(gemm_kernel<In, Bias, Out>, unsigned(tiles), kThreads, stream, x, w, bias, y, rows,
                                      p.n, p.k, p.ldx, p.ldw, ldy),
                         "reference gemm launch");
    };
    if (!a.bias) return go(static_cast<const float*>(nullptr));
    return visit_dtype(p.bias_dtype, [&]<class Bias>() { return go(static_cast<const Bias*>(a.bias)); });
  });
}

}  // namespace

Status fill_bias(const GemmArgs& a, cudaStream_t stream) {
  const Problem& p = a.p;
  if (p.m == 0 || p.n == 0) return Status::Ok();
  int64_t blocks = std::min<int64_t>((p.m * p.n + 255) / 256, 65536);
  return visit_dtype(p.out_dtype, [&]<class Out>() {
    Out* y = static_cast<Out*>(a.y);
    auto go = [&]<class Bias>(const Bias* bias) {
      return cuda_status(launch_plain(fill_kernel<Bias, Out>, unsigned(blocks), 256, stream, bias, y, p.m, p.n, p.ldy),
                         "fill_bias launch");
    };
    if (!a.bias) return go(static_cast<const float*>(nullptr));
    return visit_dtype(p.bias_dtype, [&]<class Bias>() { return go(static_cast<const Bias*>(a.bias)); });
  });
}

Status gemm_fp32(const GemmArgs& a, int64_t row0, int64_t rows, float* y_ref, cudaStream_t stream) {
  return gemm_typed<float>(a, row0, rows, y_ref, a.p.n, stream);
}

}  // namespace reference

namespace {

class ReferenceKernel final : public Kernel {
 public:
  ReferenceKernel() {
    limits_.k_zero = true;  // loops over K simply run zero times
  }
  const std::string& name() const override { return name_; }
  Backend backend() const override { return Backend::reference; }
  const Limits& limits() const override { return limits_; }
  Status run(const GemmArgs& a, void*, size_t, cudaStream_t stream) const override {
    return visit_dtype(a.p.out_dtype, [&]<class Out>() {
      return reference::gemm_typed<Out>(a, 0, a.p.m, static_cast<Out*>(a.y), a.p.ldy, stream);
    });
  }

 private:
  std::string name_ = "reference_simt_64x64_i64";
  Limits limits_;
};

}  // namespace

void add_reference_kernels(BackendKernels& out) {
  out.backend = Backend::reference;
  out.kernels.push_back(std::make_unique<ReferenceKernel>());
}

}  // namespace tgemm
