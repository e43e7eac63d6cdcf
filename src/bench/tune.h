// Tuning one shape: every candidate that can implement it, checked against the reference, then timed
// interleaved by the one benchmark routine. The tune command runs this in worker processes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench/operands.h"
#include "bench/timing.h"
#include "registry/registry.h"
#include "table/table.h"
#include "tgemm/tgemm.h"

namespace tgemm::bench {

struct TuneOptions {
  std::vector<Backend> backends = {Backend::sm90, Backend::skinny, Backend::cublaslt};
  // Shuffled rounds (TimingOptions::shuffle): in a fixed order the candidate right after cuBLASLt's default ran up to
  // 5.6% faster than the same kernel later in the round (run 164), which decided near-ties at the seed's M.
  TimingOptions timing{10, 50, TimingMode::graph, 200, true};
  double max_err_ratio = 0.05;
  std::vector<std::string> skip;  // kernels known to fault or hang on this shape
  // The backends' extra candidates (Registry::search): cuBLASLt's heuristic answers with other cluster shapes, and at
  // `wide` the first answers with other custom options too (backends/cublaslt/lt_algo.h). `tgemm tune --search`.
  SearchDepth search = SearchDepth::wide;
  // The fastest `finalists` of the first round, cuBLASLt's default and the fastest candidate of every backend are
  // timed again interleaved with twice the iterations; the pick is made from that round alone (choose_finalists).
  // Run 18 saw the first round's order of near-ties flip between the tuner and the bench by 3-5%.
  int finalists = 4;
  // The bench measures the table's pick against cuBLASLt's default, so another candidate replaces the default only
  // when the final round has it faster by more than this (percent).
  double keep_default_pct = 2.0;
  // The confirm round: where the pick is not cuBLASLt's default, the two are timed again in the bench's own 2-way
  // order (A B A B, fresh samples, twice the iterations), and the pick stands only if it is faster there
  // (CandidateResult::confirm_x). The final round's times decided the pick, so they flatter it: cuBLASLt's other
  // answers that the tuner picked measured 1.070x cuBLASLt in their final rounds and 1.051x in the bench (session
  // 19, 74 shapes), our kernels 1.08 against 1.07. It runs right after the final round, at the clock that round's
  // heat leaves, so ranks that swap between the power-capped and the boost clock pass it (4096^3, session 19).
  bool confirm = true;
  // Idle time before the confirm round (ms; 0: none), so that it starts as cool as a bench shape does after its
  // reference checks. An A/B knob for the clock difference above (`tgemm tune --confirm-pause-ms`). Run 174 (45 shapes
  // at M >= 512, docs/benchmarks.md session 20): 200 ms changed 1 pick, and the tables read alike in the bench.
  double confirm_pause_ms = 0;
  // The pairwise round (0: none). After the final round each other finalist is timed 2-way against that round's pick
  // (A B A B) in `pair_repeats` separate calls, each after confirm_pause_ms, and its speed against the pick is the
  // median of the calls' (CandidateResult::pair_x); pick_index then ranks the finalists by it. This is how the
  // bench's top-3 re-check times them (`tgemm bench --pairwise --pair-repeats n`): in shared rounds of five or more the
  // card's clock moves between a shape's first rounds and its later ones, and some ranks turn with it (docs/
  // benchmarks.md sessions 30-31), so a pick from the final round alone can read 3% behind a candidate 2-way.
  int pair_repeats = 0;
};

struct CandidateResult {
  std::string kernel;
  Backend backend = Backend::cublaslt;
  int pieces = 1;         // > 1: the kernel cannot address the whole problem and ran as the dispatcher splits it
  bool ok = false;        // ran, and err_ratio within the limit
  double us = 0;
  double err_ratio = 1, rel_l2 = 0, max_rel = 0;
  bool finalist = false;  // `us` is from the final round (see TuneOptions::finalists)
  double confirm_x = 0;   // > 0: its speed-up over cuBLASLt's default in the confirm round (TuneOptions::confirm)
  double pair_x = 0;      // > 0: its speed against the final round's pick, 2-way (TuneOptions::pair_repeats); 1: the pick
  std::string note;       // why not ok
};

// The tune worker's answers to its parent (`tgemm tune --worker`, tools/cmd_tune.cpp), one line each:
//   begin <i> <kernel>   before a candidate's first run alone; "-": the timing rounds, where no kernel runs alone
//   alive <i>            during the timing rounds, at most once a second (TimingOptions::heartbeat)
//   cand <i> <kernel> <ok> <us> <err_ratio> <rel_l2> <max_rel> <pieces> <final> <confirm_x> <pair_x> <note>
//   done <i>
//   error <i> <message>
// The parent's watchdog counts any line as progress, and blames a silence on the last "begin"'s kernel, if any.
struct WorkerLine {
  enum class Tag { begin, alive, cand, done, error, unknown };
  Tag tag = Tag::unknown;
  long shape = -1;
  std::string kernel;    // begin: the candidate; "" for the timing rounds
  CandidateResult cand;  // cand (its backend is not on the line)
  std::string message;   // error
};
std::string one_line(std::string s);  // line breaks and tabs to spaces, "-" for an empty text: a line's last field
std::string worker_begin_line(long shape, const std::string& kernel);  // kernel "": the timing rounds
std::string worker_alive_line(long shape);
std::string worker_cand_line(long shape, const CandidateResult& r);
std::string worker_done_line(long shape);
std::string worker_error_line(long shape, const std::string& message);  // shape -1: not about a shape
WorkerLine parse_worker_line(const std::string& line);

// `kernels` without those whose fault_family() is that of a kernel named in `skip` (kernels known to fault or hang on
// the shape), in their order. A name in `skip` that is none of `kernels` drops only itself.
std::vector<const Kernel*> drop_skipped(const std::vector<const Kernel*>& kernels, const std::vector<std::string>& skip);

// One plan per kernel of the chosen backends that can run `p`: whole, or split into the pieces the dispatcher
// would make for it (a table row naming a kernel that cannot address the whole problem runs split), less the kernels
// drop_skipped drops for opt.skip.
std::vector<Plan> tune_candidates(const Dispatcher& d, const Problem& p, const DeviceInfo& dev, const TuneOptions& opt);

// The final round's candidates, as indices into `ranked` (the first round's passing candidates, fastest first): the
// first `finalists`, `default_kernel`, and the fastest of each backend not among them. The first round of a shape
// interleaves dozens of kernels, and its times of one kernel can differ from a round of a few by 10% or more: at
// 65536 x 6144 x 1280 four cuBLASLt algorithms ranked ahead of our fastest kernel there and then took 1630-1690 us
// in the final round against its 1450 (run 111), so our kernels never reached the round that decides.
std::vector<size_t> choose_finalists(const std::vector<const CandidateResult*>& ranked, int finalists,
                                     const std::string& default_kernel);

// `on_begin(kernel)` is called before each candidate first runs (a worker prints it, so a parent that sees
// the worker die knows which candidate did it), and with "" before the timing rounds, where a hang is no single
// candidate's. `opt.timing.heartbeat`, if set, is called as the timing rounds progress.
Status tune_shape(const Shape& s, const TuneOptions& opt, cudaStream_t stream, std::vector<CandidateResult>* out,
                  const std::function<void(const std::string&)>& on_begin = {});

// The pick among `results` (an index), or -1 if none passed: where a final round ran, only finalists compete (their
// times come from one round), and where the pairwise round ran, only the finalists it measured, ranked by pair_x;
// cuBLASLt's default (`default_kernel`) stays the pick unless another is more than `keep_default_pct` percent faster.
// The confirm round is not applied here (best_row applies it).
int pick_index(const std::vector<CandidateResult>& results, const std::string& default_kernel, double keep_default_pct);

// The pick as a table row for this device; false if none passed. pick_index's choice, except that a pick which was
// not faster than cuBLASLt's default in its confirm round (confirm_x in (0, 1]) gives the row back to the default.
bool best_row(const Shape& s, const std::vector<CandidateResult>& results, const DeviceInfo& dev, TableRow* row,
              const std::string& default_kernel = "cublaslt", double keep_default_pct = 0);

}  // namespace tgemm::bench
