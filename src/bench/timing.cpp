#include "bench/timing.h"

#include <algorithm>
#include <string>

namespace tgemm::bench {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Status time_interleaved(const std::vector<Launch>& launches, int rotations, const TimingOptions& opt, cudaStream_t stream,
                        std::vector<Timing>* out) {
  const size_t n = launches.size();
  out->assign(n, Timing{});
  rotations = std::max(rotations, 1);
  std::vector<bool> alive(n, true);
  // Warm-up: module load, heuristics, workspace growth stay out of the numbers.
  for (int w = 0; w < opt.warmup; ++w)
    for (size_t j = 0; j < n; ++j)
      if (alive[j]) {
        Status s = launches[j](w % rotations, stream);
        if (!s.ok()) alive[j] = false, (*out)[j].status = s;
      }
  if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess)
    return {StatusCode::cuda_error, std::string("warm-up: ") + cudaGetErrorString(e)};
  const int iters = std::max(opt.iters, 1);
  std::vector<cudaEvent_t> ev(2 * n * size_t(iters));
  for (auto& e : ev) cudaEventCreate(&e);
  std::vector<std::vector<bool>> ran(n, std::vector<bool>(size_t(iters), false));
  for (int i = 0; i < iters; ++i)
    for (size_t j = 0; j < n; ++j) {
      if (!alive[j]) continue;
      size_t at = 2 * (size_t(i) * n + j);
      cudaEventRecord(ev[at], stream);
      Status s = launches[j]((opt.warmup + i) % rotations, stream);
      cudaEventRecord(ev[at + 1], stream);
      if (!s.ok()) alive[j] = false, (*out)[j].status = s;
      else ran[j][size_t(i)] = true;
    }
  cudaError_t e = cudaStreamSynchronize(stream);
  std::vector<std::vector<double>> us(n, std::vector<double>(size_t(iters), -1));
  if (e == cudaSuccess)
    for (int i = 0; i < iters; ++i)
      for (size_t j = 0; j < n; ++j)
        if (ran[j][size_t(i)]) {
          float ms = 0;
          size_t at = 2 * (size_t(i) * n + j);
          cudaEventElapsedTime(&ms, ev[at], ev[at + 1]);
          us[j][size_t(i)] = double(ms) * 1e3;
        }
  for (auto& x : ev) cudaEventDestroy(x);
  if (e != cudaSuccess) return {StatusCode::cuda_error, std::string("timed runs: ") + cudaGetErrorString(e)};
  for (size_t j = 0; j < n; ++j) {
    std::vector<double> mine, ratios;
    for (int i = 0; i < iters; ++i) {
      double t = us[j][size_t(i)];
      if (t < 0) continue;
      mine.push_back(t);
      if (us[0][size_t(i)] > 0) ratios.push_back(t / us[0][size_t(i)]);
    }
    Timing& t = (*out)[j];
    if (mine.empty()) continue;
    t.ok = (*out)[j].status.ok();
    t.median_us = median(mine);
    t.min_us = *std::min_element(mine.begin(), mine.end());
    t.ratio_vs_first = ratios.empty() ? 0 : median(ratios);
  }
  return Status::Ok();
}

}  // namespace tgemm::bench
