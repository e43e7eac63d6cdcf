// The one benchmark routine: the bench command, the tuner and the tests all time through it.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "tgemm/types.h"

namespace tgemm::bench {

// Enqueues one run on `stream` using operand set `rotation` (of `rotations`).
using Launch = std::function<Status(int rotation, cudaStream_t stream)>;

enum class TimingMode {
  // Each sample is one launch bracketed by events: what an engine that launches kernel by kernel sees,
  // launch gaps included.
  plain,
  // Each sample replays a CUDA graph of back-to-back launches (each on the next operand set): what an engine
  // that replays graphs sees — no launch gaps, no host overhead.
  graph,
  // Graph replays for `sustain_ms` per sample, only the last quarter timed: each candidate at the clock its own
  // power draw settles to. Under the H200's 700 W cap that clock differs between kernels (run 7 in
  // scripts/dev/SM90_NOTES.md: ours 1365-1380 MHz back to back, cuBLASLt 1515-1545), and ~300 us graph samples
  // alternating with cuBLASLt's share one clock instead. Slow: for a few shapes, not for tuning.
  sustained,
};

struct TimingOptions {
  int warmup = 5;
  int iters = 30;
  TimingMode mode = TimingMode::plain;
  double sustain_ms = 200;  // sustained mode: length of one sample
  // Each round visits the candidates in its own order (round_order). In the fixed order (A B C A B C ...) a
  // candidate's clock under the power cap depends on its place after cuBLASLt's lighter samples: in run 164 one kernel
  // timed in three slots after cuBLASLt read 1.101 / 1.094 / 1.086x at 340000 rows, and the pick right after cuBLASLt
  // 1.099x against 1.041x for the same kernel later in the round at 768000. The tuner shuffles, and so does the bench
  // wherever it times more than cuBLASLt and the pick (or with --shuffle-order); its 2-way comparison keeps DESIGN.md's
  // A B A B, where each of the two always follows the other.
  bool shuffle = false;
  // Called on the host after each round of samples is enqueued, each warm-up round and each graph capture: a sign of
  // life for the tuner's watchdog (cmd_tune.cpp). The stream queue fills within a few rounds, so rounds enqueue at
  // the GPU's pace and a hung kernel stops the calls. Without it a round of ~100 candidates of 8.5 ms each (seed M =
  // 340000) printed nothing for more than the 30 s timeout, and the watchdog blamed the last candidate checked before
  // the timing: runs 295 and 306 "hung" 13 and 16 kernels that run in 8.6 ms alone (run 308).
  std::function<void()> heartbeat = {};
};

const char* timing_mode_name(TimingMode m);
bool parse_timing_mode(const std::string& s, TimingMode* out);  // "graph", "plain" or "sustained"

struct Timing {
  double median_us = 0, min_us = 0;   // per launch
  double ratio_vs_first = 1;          // median over rounds of (this / launches[0]) from the same round
  int launches_per_sample = 1;        // graph mode: the graph's length
  bool ok = false;
  Status status;
};

// Times the launches interleaved (A B C A B C ...), so that drift of the card's clocks hits every launch alike.
// Consecutive launches use consecutive operand sets (mod `rotations`), so no launch finds the inputs of the one
// before it in L2. A launch that fails is reported and left out of later rounds.
Status time_interleaved(const std::vector<Launch>& launches, int rotations, const TimingOptions& opt, cudaStream_t stream,
                        std::vector<Timing>* out);

double median(std::vector<double> v);

// The fastest of t[first..] and t[pick], each judged by its per-round ratio against t[0] (Timing::ratio_vs_first), and
// how much faster it read than t[pick] by that ratio (a fraction; 0 where t[pick] is the fastest). Ratios, because
// each round's samples share one clock: with the card drifting between clock states in a run, medians of different
// launches can land in different states. In run 266, cuBLASLt's default timed as two rows of one shape read medians
// 5.5% apart (100.0 and 105.6 us at 512 x 3584 x 18944) while their per-round ratio was 1.0003.
struct Fastest {
  size_t index = 0;
  double gap = 0;
};
Fastest fastest_by_ratio(const std::vector<Timing>& t, size_t pick, size_t first);

// Speed against the first launch of its rounds: 1 / ratio_vs_first; 0 for a failed or unmeasured launch.
double speed_vs_first(const Timing& t);

// `bench --pairwise`: a candidate timed 2-way against the pick (c.ratio_vs_first = c / pick), restated against cuBLASLt
// through the pick's own 2-way rounds with it (pick.ratio_vs_first = pick / cuBLASLt): c / cuBLASLt = (c / pick) *
// (pick / cuBLASLt). Each factor is a median of per-pair ratios from rounds of two, as DESIGN.md asks of a ratio; the
// product is not measured in one set of rounds. Ratio 0 (no speed) where either side has none.
Timing through_pick(Timing c, const Timing& pick);

// One launch timed in several separate calls of time_interleaved (`bench --pairwise --pair-repeats`), as one Timing:
// the medians of their medians and of their ratios, the least of their minima; not ok unless every call is (the first
// failure's status). At 64 x 37888 x 3584 the pick read 72.0 us in one 2-way call and 68.4 us in the next of the same
// process (run 275), so one call's ratio can be 6% off where the median of three is not.
Timing median_of_calls(const std::vector<Timing>& calls);

// `second` timed 2-way against `first` (A B A B) in `calls` separate calls of time_interleaved, each after
// pause(stream, pause_ms): *second_out is second's median_of_calls (its ratio_vs_first: second / first), *first_out
// (if given) first's. The bench's `--pairwise --pair-repeats` and the tuner's pairwise round time pairs this way.
Status time_pair_calls(const Launch& first, const Launch& second, int rotations, const TimingOptions& opt, cudaStream_t stream,
                       int calls, double pause_ms, Timing* second_out, Timing* first_out = nullptr);

// The order in which round `round` visits n candidates when shuffled: candidate 0 (in the bench cuBLASLt, the
// reference of every ratio) first, the others in the rows of a Williams design, so that over a cycle of rounds each
// candidate comes right after each other one equally often, round boundaries included. What a sample inherits under
// the power cap is its predecessor's clock, so that is what must balance. Pseudo-random orders with fixed seeds did
// not: over the default 30 rounds with 4 candidates the one in the last slot followed cuBLASLt in 15 rounds and the
// pick (slot 1) in 7, and at 768000 rows the pick read 1.071x against 1.090x for the same kernel in the last slot
// (run 216).
std::vector<size_t> round_order(size_t n, int round);

// Waits for `stream`, then leaves the GPU idle for `ms` (nothing when ms <= 0), so that the timing round after it starts
// from the clock a pause leaves. Under the 700 W cap the card's clock falls within tens of milliseconds of dense
// GEMMs, and kernels rank differently at the two ends: at 4096^3 cuBLASLt's default took 171-175 us in a shape's first
// round and 8-18% longer in the rounds right after it, where its alternatives led it by ~3%; after a 100 ms pause it
// stayed within 3% of round 1 and led them by 1-10% (run 273). The tuner's confirm round
// (TuneOptions::confirm_pause_ms) and `tgemm bench --settle-ms` pause through this.
Status pause(cudaStream_t stream, double ms);

}  // namespace tgemm::bench
