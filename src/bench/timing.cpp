#include "bench/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <string>
#include <thread>

#include "core/cuda_status.h"

namespace tgemm::bench {

namespace {

// Graph mode: a graph's replay should last at least this long, so that the graph launch's own cost and the
// events' resolution (~0.5 us) stay below 1% of a sample.
constexpr double kMinGraphSampleUs = 300;
constexpr int kMaxGraphLength = 1024;

// Rounds of samples, interleaved: enqueue(j, round) puts candidate j's sample on the stream; each sample is
// bracketed by its own events. us[j][round] is the sample's time, or -1 where it did not run.
// `before(j, round)`, if given, is enqueued ahead of the sample's first event (sustained mode's untimed replays).
// `shuffle`: each round in its own order (TimingOptions::shuffle). `heartbeat`, if given, after each round's enqueue.
Status time_rounds(size_t n, int rounds, bool shuffle, const std::function<Status(size_t, int)>& enqueue,
                   cudaStream_t stream, std::vector<bool>* alive, std::vector<Timing>* out,
                   std::vector<std::vector<double>>* us, const std::function<void()>& heartbeat,
                   const std::function<Status(size_t, int)>& before = {}) {
  std::vector<cudaEvent_t> ev(2 * n * size_t(rounds));
  for (auto& e : ev) cudaEventCreate(&e);
  us->assign(n, std::vector<double>(size_t(rounds), -1));
  std::vector<std::vector<bool>> ran(n, std::vector<bool>(size_t(rounds), false));
  std::vector<size_t> order(n);
  for (int i = 0; i < rounds; ++i) {
    if (shuffle) {
      order = round_order(n, i);
    } else {
      std::iota(order.begin(), order.end(), size_t(0));
    }
    for (size_t j : order) {
      if (!(*alive)[j]) continue;
      size_t at = 2 * (size_t(i) * n + j);
      Status s = before ? before(j, i) : Status::Ok();
      if (!s.ok()) {
        (*alive)[j] = false, (*out)[j].status = s;
        continue;
      }
      cudaEventRecord(ev[at], stream);
      s = enqueue(j, i);
      cudaEventRecord(ev[at + 1], stream);
      if (!s.ok()) (*alive)[j] = false, (*out)[j].status = s;
      else ran[j][size_t(i)] = true;
    }
    if (heartbeat) heartbeat();
  }
  cudaError_t e = cudaStreamSynchronize(stream);
  if (e == cudaSuccess)
    for (int i = 0; i < rounds; ++i)
      for (size_t j = 0; j < n; ++j)
        if (ran[j][size_t(i)]) {
          float ms = 0;
          size_t at = 2 * (size_t(i) * n + j);
          cudaEventElapsedTime(&ms, ev[at], ev[at + 1]);
          (*us)[j][size_t(i)] = double(ms) * 1e3;
        }
  for (auto& x : ev) cudaEventDestroy(x);
  return cuda_status(e, "timed runs");
}

// Captures `length` launches of `launch` (operand sets 0, 1, ... mod rotations) into an executable graph.
Status capture(const Launch& launch, int length, int rotations, cudaStream_t stream, cudaGraphExec_t* exec) {
  *exec = nullptr;
  if (Status s = cuda_status(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture"); !s.ok()) return s;
  Status st = Status::Ok();
  for (int t = 0; t < length && st.ok(); ++t) st = launch(t % rotations, stream);
  cudaGraph_t g = nullptr;
  cudaError_t e = cudaStreamEndCapture(stream, &g);
  if (st.ok()) st = cuda_status(e, "capture");
  if (st.ok()) st = cuda_status(cudaGraphInstantiate(exec, g, 0), "instantiate graph");
  if (g) cudaGraphDestroy(g);
  return st;
}

}  // namespace

const char* timing_mode_name(TimingMode m) {
  return m == TimingMode::graph ? "graph replay" : m == TimingMode::sustained ? "sustained graph replay" : "plain launches";
}

bool parse_timing_mode(const std::string& s, TimingMode* out) {
  if (s == "graph") *out = TimingMode::graph;
  else if (s == "sustained") *out = TimingMode::sustained;
  else if (s == "plain") *out = TimingMode::plain;
  else return false;
  return true;
}

std::vector<size_t> round_order(size_t n, int round) {
  std::vector<size_t> order(n);
  if (n == 0) return order;
  // Candidate 0 opens every round, so its predecessor is the previous round's last. The others follow in the rows of
  // a Williams design on m = n - 1: first row 0, 1, m-1, 2, m-2, ...; row r adds r (mod m), and for odd m the mirrored
  // rows m..2m-1 supply the pairs the first m rows repeat. Over a cycle every ordered pair of distinct candidates is
  // adjacent equally often, the pairs across round boundaries included (each is some x then 0), and none follows
  // itself.
  const size_t m = n - 1;
  const size_t cycle = m == 0 ? 1 : m % 2 == 0 ? m : 2 * m;
  const size_t r = size_t(round < 0 ? 0 : round) % cycle;
  for (size_t p = 0; p < m; ++p) {
    const size_t first = p % 2 == 1 ? (p + 1) / 2 : (m - p / 2) % m;
    order[1 + p] = 1 + (first + r) % m;
  }
  if (r >= m && m > 0) std::reverse(order.begin() + 1, order.end());
  return order;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Status pause(cudaStream_t stream, double ms) {
  if (ms <= 0) return Status::Ok();
  if (Status s = cuda_status(cudaStreamSynchronize(stream), "before a pause"); !s.ok()) return s;
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
  return Status::Ok();
}

double speed_vs_first(const Timing& t) { return t.ok && t.ratio_vs_first > 0 ? 1.0 / t.ratio_vs_first : 0.0; }

Timing through_pick(Timing c, const Timing& pick) {
  c.ratio_vs_first = speed_vs_first(c) > 0 && speed_vs_first(pick) > 0 ? c.ratio_vs_first * pick.ratio_vs_first : 0;
  return c;
}

Timing median_of_calls(const std::vector<Timing>& calls) {
  Timing out;
  if (calls.empty()) {
    out.status = {StatusCode::internal, "no timed calls"};
    return out;
  }
  std::vector<double> med, ratio;
  out.min_us = calls[0].min_us;
  for (const Timing& c : calls) {
    if (!c.ok) return c;
    med.push_back(c.median_us), ratio.push_back(c.ratio_vs_first);
    out.min_us = std::min(out.min_us, c.min_us);
  }
  out.median_us = median(med);
  out.ratio_vs_first = median(ratio);
  out.launches_per_sample = calls[0].launches_per_sample;
  out.ok = true;
  return out;
}

Status time_pair_calls(const Launch& first, const Launch& second, int rotations, const TimingOptions& opt, cudaStream_t stream,
                       int calls, double pause_ms, Timing* second_out, Timing* first_out) {
  std::vector<Timing> firsts, seconds;
  for (int i = 0; i < calls; ++i) {
    std::vector<Timing> t;
    if (Status s = pause(stream, pause_ms); !s.ok()) return s;
    if (Status s = time_interleaved({first, second}, rotations, opt, stream, &t); !s.ok()) return s;
    firsts.push_back(t[0]), seconds.push_back(t[1]);
  }
  *second_out = median_of_calls(seconds);
  if (first_out) *first_out = median_of_calls(firsts);
  return Status::Ok();
}

Fastest fastest_by_ratio(const std::vector<Timing>& t, size_t pick, size_t first) {
  auto speed = [&](size_t j) { return j < t.size() ? speed_vs_first(t[j]) : 0.0; };
  Fastest f;
  f.index = pick;
  for (size_t j = first; j < t.size(); ++j)
    if (speed(j) > speed(f.index)) f.index = j;
  if (speed(pick) > 0 && f.index != pick) f.gap = speed(f.index) / speed(pick) - 1;
  return f;
}

Status time_interleaved(const std::vector<Launch>& launches, int rotations, const TimingOptions& opt, cudaStream_t stream,
                        std::vector<Timing>* out) {
  const size_t n = launches.size();
  out->assign(n, Timing{});
  rotations = std::max(rotations, 1);
  std::vector<bool> alive(n, true);
  // One counter over all launches: the next launch, whichever candidate, takes the next operand set.
  long long seq = 0;
  auto plain = [&](size_t j, int) { return launches[j](int(seq++ % rotations), stream); };
  // Warm-up: module load, heuristics, workspace growth stay out of the numbers (and out of any graph).
  for (int w = 0; w < opt.warmup; ++w) {
    for (size_t j = 0; j < n; ++j)
      if (alive[j])
        if (Status s = plain(j, w); !s.ok()) alive[j] = false, (*out)[j].status = s;
    if (opt.heartbeat) opt.heartbeat();
  }
  if (Status s = cuda_status(cudaStreamSynchronize(stream), "warm-up"); !s.ok()) return s;

  const int iters = std::max(opt.iters, 1);
  std::vector<std::vector<double>> us;
  std::vector<int> length(n, 1);
  std::vector<cudaGraphExec_t> exec(n, nullptr);
  Status st = Status::Ok();
  if (opt.mode == TimingMode::plain) {
    st = time_rounds(n, iters, opt.shuffle, plain, stream, &alive, out, &us, opt.heartbeat);
  } else {
    // Graph length from a plain estimate; a multiple of `rotations`, so every operand set is read once per
    // cycle and the graph after this one starts on a set the last `rotations - 1` launches did not touch.
    std::vector<std::vector<double>> est;
    st = time_rounds(n, 2, false, plain, stream, &alive, out, &est, opt.heartbeat);
    auto est_us = [&](size_t j) { return std::max(0.5, std::min(est[j][0] > 0 ? est[j][0] : 1e9, est[j][1] > 0 ? est[j][1] : 1e9)); };
    for (size_t j = 0; j < n && st.ok(); ++j) {
      if (!alive[j]) continue;
      const double t = est_us(j);
      int want = int(std::min<double>(kMaxGraphLength, std::ceil(kMinGraphSampleUs / t)));
      length[j] = rotations * std::max(1, (want + rotations - 1) / rotations);
      if (Status s = capture(launches[j], length[j], rotations, stream, &exec[j]); !s.ok()) {
        alive[j] = false, (*out)[j].status = s;
        cudaGetLastError();  // a failed capture leaves no sticky error; clear the last-error slot
        continue;
      }
      (*out)[j].launches_per_sample = length[j];
      st = cuda_status(cudaGraphLaunch(exec[j], stream), "graph warm-up");  // uploads the graph
      if (opt.heartbeat) opt.heartbeat();
    }
    if (st.ok()) st = cuda_status(cudaStreamSynchronize(stream), "graph warm-up");
    // Sustained: per sample, replays for 3/4 of sustain_ms untimed, then the timed ones for the last quarter.
    std::vector<int> warm_reps(n, 0), timed_reps(n, 1);
    if (opt.mode == TimingMode::sustained)
      for (size_t j = 0; j < n; ++j) {
        if (!alive[j]) continue;
        timed_reps[j] = std::max(1, int(std::ceil(opt.sustain_ms * 250 / (est_us(j) * length[j]))));
        warm_reps[j] = 3 * timed_reps[j];
      }
    auto replay = [&](size_t j, int reps) {
      for (int r = 0; r < reps; ++r)
        if (cudaError_t e = cudaGraphLaunch(exec[j], stream); e != cudaSuccess) return cuda_status(e, "graph launch");
      return Status::Ok();
    };
    if (st.ok())
      st = time_rounds(n, iters, opt.shuffle, [&](size_t j, int) { return replay(j, timed_reps[j]); }, stream, &alive, out, &us,
                       opt.heartbeat, [&](size_t j, int) { return replay(j, warm_reps[j]); });
    for (cudaGraphExec_t g : exec)
      if (g) cudaGraphExecDestroy(g);
    if (st.ok())
      for (size_t j = 0; j < n; ++j)
        for (double& t : us[j])
          if (t > 0) t /= double(length[j]) * timed_reps[j];
  }
  if (!st.ok()) return st;
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
    t.ok = t.status.ok();
    t.median_us = median(mine);
    t.min_us = *std::min_element(mine.begin(), mine.end());
    t.ratio_vs_first = ratios.empty() ? 0 : median(ratios);
  }
  return Status::Ok();
}

}  // namespace tgemm::bench
