#include "bench/tune.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "bench/problem_bench.h"
#include "core/cuda_status.h"
#include "registry/registry.h"

namespace tgemm::bench {

namespace {
// Splits beyond this are not tuned: the seed's largest shapes need 3 pieces for an int32 kernel.
constexpr size_t kMaxTunePieces = 16;

// Where cuBLASLt's default ran and passed among `results`, or -1.
int default_index(const std::vector<CandidateResult>& results, const std::string& default_kernel) {
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].kernel == default_kernel && results[i].ok && results[i].us > 0) return int(i);
  return -1;
}
}  // namespace

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s.empty() ? "-" : s;
}

std::string worker_begin_line(long shape, const std::string& kernel) {
  return "begin " + std::to_string(shape) + " " + (kernel.empty() ? "-" : kernel);
}

std::string worker_alive_line(long shape) { return "alive " + std::to_string(shape); }
std::string worker_done_line(long shape) { return "done " + std::to_string(shape); }
std::string worker_error_line(long shape, const std::string& message) {
  return "error " + std::to_string(shape) + " " + one_line(message);
}

std::string worker_cand_line(long shape, const CandidateResult& r) {
  char b[256];
  std::snprintf(b, sizeof b, "cand %ld %s %d %.4f %.6f %.3e %.3e %d %d %.5f %.5f ", shape, r.kernel.c_str(), r.ok ? 1 : 0, r.us,
                r.err_ratio, r.rel_l2, r.max_rel, r.pieces, r.finalist ? 1 : 0, r.confirm_x, r.pair_x);
  return b + one_line(r.note);
}

WorkerLine parse_worker_line(const std::string& line) {
  WorkerLine w;
  std::istringstream ls(line);
  std::string tag;
  if (!(ls >> tag >> w.shape)) return w;
  auto rest = [&] {
    std::string s;
    std::getline(ls, s);
    s.erase(0, std::min(s.size(), s.find_first_not_of(' ')));
    return s == "-" ? std::string() : s;
  };
  if (tag == "begin") {
    w.tag = WorkerLine::Tag::begin;
    ls >> w.kernel;
    if (w.kernel == "-") w.kernel.clear();
  } else if (tag == "alive") {
    w.tag = WorkerLine::Tag::alive;
  } else if (tag == "cand") {
    CandidateResult& r = w.cand;
    int ok = 0, fin = 0;
    if (!(ls >> r.kernel >> ok >> r.us >> r.err_ratio >> r.rel_l2 >> r.max_rel >> r.pieces >> fin >> r.confirm_x >> r.pair_x)) return w;
    r.ok = ok != 0;
    r.finalist = fin != 0;
    r.note = rest();
    w.tag = WorkerLine::Tag::cand;
  } else if (tag == "done") {
    w.tag = WorkerLine::Tag::done;
  } else if (tag == "error") {
    w.tag = WorkerLine::Tag::error;
    w.message = rest();
  }
  return w;
}

std::vector<const Kernel*> drop_skipped(const std::vector<const Kernel*>& kernels, const std::vector<std::string>& skip) {
  std::vector<std::string> families;
  for (const Kernel* k : kernels)
    if (std::find(skip.begin(), skip.end(), k->name()) != skip.end()) families.push_back(k->fault_family());
  std::vector<const Kernel*> out;
  for (const Kernel* k : kernels) {
    if (std::find(skip.begin(), skip.end(), k->name()) != skip.end()) continue;
    if (std::find(families.begin(), families.end(), k->fault_family()) != families.end()) continue;
    out.push_back(k);
  }
  return out;
}

std::vector<Plan> tune_candidates(const Dispatcher& d, const Problem& p, const DeviceInfo& dev, const TuneOptions& opt) {
  std::vector<Plan> out;
  std::vector<const Kernel*> kernels = Registry::get().all();
  for (const Kernel* k : Registry::get().search(p, opt.search, opt.backends)) kernels.push_back(k);
  for (const Kernel* k : drop_skipped(kernels, opt.skip)) {
    if (std::find(opt.backends.begin(), opt.backends.end(), k->backend()) == opt.backends.end()) continue;
    // A kernel built for a range of M (skinny: M <= 64) is no candidate outside it: the dispatcher would run it
    // on thousands of row slices, which is never what a table row means.
    const Limits& l = k->limits();
    if (p.m > l.max_m || p.m < l.min_m) continue;
    // make_plan with the kernel forced: whole if it can, else split; another kernel if neither.
    Plan pl = d.make_plan(p, dev, k->name());
    if (pl.status.ok() && pl.kernel == k && pl.pieces.size() <= kMaxTunePieces) out.push_back(std::move(pl));
  }
  return out;
}

Status tune_shape(const Shape& s, const TuneOptions& opt, cudaStream_t stream, std::vector<CandidateResult>* out,
                  const std::function<void(const std::string&)>& on_begin) {
  out->clear();
  Operands o;
  if (Status st = Operands::make(s, 31337 + uint64_t(s.m) * 7 + uint64_t(s.n), stream, &o); !st.ok()) return st;
  const GemmArgs args = o.args(0);
  std::unique_ptr<Dispatcher> d;
  DispatcherOptions dopt;
  dopt.load_default_tables = false;
  if (Status st = Dispatcher::create(dopt, &d); !st.ok()) return st;
  const std::vector<Plan> cands = tune_candidates(*d, args.p, DeviceInfo::current(), opt);
  // 1. Each candidate once, alone, against the reference: a faulting kernel shows here, before timing. The reference
  // rows are computed once per set of piece edges (sampled rows include them) and serve every candidate.
  std::map<int64_t, ReferenceRows> refs;  // by the first piece's rows; 0: unsplit
  std::vector<const Plan*> passed;
  for (const Plan& pl : cands) {
    const Kernel* k = pl.kernel;
    if (on_begin) on_begin(k->name());
    CandidateResult r;
    r.kernel = k->name();
    r.backend = k->backend();
    r.pieces = int(pl.pieces.size());
    Compare c;
    Status st = poison(o.yv(), stream);
    if (st.ok()) st = launch_plan(*d, pl, o)(0, stream);
    if (st.ok()) {
      if (Status s = cuda_status(cudaStreamSynchronize(stream), k->name() + " faulted"); !s.ok()) return s;
      // Sampled rows keep the reference's cost bounded on big shapes; piece edges are among them.
      const int64_t edge = pl.pieces.size() > 1 ? pl.pieces[0].m : 0;
      auto ref = refs.find(edge);
      if (ref == refs.end()) {
        ReferenceRows made;
        if (Status rs = ReferenceRows::make(args, int64_t(1) << 22, edge, stream, &made); !rs.ok()) return rs;
        ref = refs.emplace(edge, std::move(made)).first;
      }
      st = ref->second.compare(args, default_tol(s.outdtype), &c, stream);
    }
    r.err_ratio = c.err_ratio();
    r.rel_l2 = c.rel_l2();
    r.max_rel = c.max_rel;
    if (!st.ok()) r.note = st.to_string();
    else if (r.err_ratio > opt.max_err_ratio) r.note = "err_ratio " + std::to_string(r.err_ratio) + " > " + std::to_string(opt.max_err_ratio);
    else passed.push_back(&pl);
    r.ok = r.note.empty();
    out->push_back(r);
  }
  // From here on no single candidate runs alone: a hang in the rounds below is not the last checked kernel's.
  if (on_begin) on_begin("");
  // A candidate's result row: step 1 wrote one per candidate, in the order of `cands`.
  auto result_of = [&](const Plan* pl) -> CandidateResult* { return &(*out)[size_t(pl - cands.data())]; };
  // 2. The passing candidates timed interleaved, so clock drift hits them alike.
  auto time_round = [&](const std::vector<const Plan*>& plans, const TimingOptions& t_opt, bool final_round) -> Status {
    std::vector<Launch> launches;
    for (const Plan* pl : plans) launches.push_back(launch_plan(*d, *pl, o));
    std::vector<Timing> t;
    if (launches.empty()) return Status::Ok();
    if (Status st = time_interleaved(launches, o.rotations, t_opt, stream, &t); !st.ok()) return st;
    for (size_t i = 0; i < plans.size(); ++i) {
      CandidateResult* r = result_of(plans[i]);
      r->us = t[i].median_us;
      r->finalist = final_round;
      if (!t[i].ok) r->ok = false, r->note = t[i].status.to_string();
    }
    return Status::Ok();
  };
  if (Status st = time_round(passed, opt.timing, false); !st.ok()) return st;
  // 3. The final round: the fastest few and cuBLASLt's default, with twice the iterations.
  const std::string lt = Registry::get().cublaslt() ? Registry::get().cublaslt()->name() : "";
  std::vector<const Plan*> ranked;
  for (const Plan* pl : passed)
    if (const CandidateResult* r = result_of(pl); r->ok && r->us > 0) ranked.push_back(pl);
  std::stable_sort(ranked.begin(), ranked.end(), [&](const Plan* a, const Plan* b) { return result_of(a)->us < result_of(b)->us; });
  std::vector<const CandidateResult*> ranked_results;
  for (const Plan* pl : ranked) ranked_results.push_back(result_of(pl));
  std::vector<const Plan*> finals;
  for (size_t i : choose_finalists(ranked_results, opt.finalists, lt)) finals.push_back(ranked[i]);
  TimingOptions t_final = opt.timing;
  t_final.iters = 2 * opt.timing.iters;
  if (opt.finalists > 0 && finals.size() > 1)
    if (Status st = time_round(finals, t_final, true); !st.ok()) return st;
  // 3b. The pairwise round: each other finalist 2-way against the final round's pick, as the bench's re-check does.
  if (opt.pair_repeats > 0 && opt.finalists > 0 && finals.size() > 1) {
    const int lead = pick_index(*out, lt, opt.keep_default_pct);
    if (lead >= 0) {
      (*out)[size_t(lead)].pair_x = 1;
      TimingOptions t_pair = t_final;
      t_pair.shuffle = false;
      const Launch lead_launch = launch_plan(*d, cands[size_t(lead)], o);
      for (const Plan* pl : finals) {
        CandidateResult* r = result_of(pl);
        if (r == &(*out)[size_t(lead)] || !r->ok) continue;
        Timing vs_lead;
        if (Status st = time_pair_calls(lead_launch, launch_plan(*d, *pl, o), o.rotations, t_pair, stream, opt.pair_repeats,
                                        opt.confirm_pause_ms, &vs_lead);
            !st.ok())
          return st;
        r->pair_x = speed_vs_first(vs_lead);
      }
    }
  }
  // 4. The confirm round: the pick against cuBLASLt's default, as the bench times them (A B A B).
  if (opt.confirm) {
    const int pick = pick_index(*out, lt, opt.keep_default_pct);
    const int dflt = default_index(*out, lt);
    if (pick >= 0 && dflt >= 0 && pick != dflt) {
      TimingOptions t_confirm = t_final;
      t_confirm.shuffle = false;
      if (Status st = pause(stream, opt.confirm_pause_ms); !st.ok()) return st;
      std::vector<Timing> t;
      const std::vector<Launch> pair = {launch_plan(*d, cands[size_t(dflt)], o), launch_plan(*d, cands[size_t(pick)], o)};
      if (Status st = time_interleaved(pair, o.rotations, t_confirm, stream, &t); !st.ok()) return st;
      // The bench's figure (cmd_bench.cpp): the median over rounds of the per-round ratio, not a ratio of medians.
      if (t[0].ok && t[1].ok && t[1].ratio_vs_first > 0) (*out)[size_t(pick)].confirm_x = 1.0 / t[1].ratio_vs_first;
    }
  }
  return Status::Ok();
}

std::vector<size_t> choose_finalists(const std::vector<const CandidateResult*>& ranked, int finalists,
                                     const std::string& default_kernel) {
  std::vector<size_t> out;
  std::vector<Backend> seen;  // backends of the candidates before i (ranked is fastest first)
  for (size_t i = 0; i < ranked.size(); ++i) {
    const CandidateResult& r = *ranked[i];
    const bool fastest_of_backend = std::find(seen.begin(), seen.end(), r.backend) == seen.end();
    if (fastest_of_backend) seen.push_back(r.backend);
    if (int(out.size()) < finalists || r.kernel == default_kernel || (finalists > 0 && fastest_of_backend))
      out.push_back(i);
  }
  return out;
}

int pick_index(const std::vector<CandidateResult>& results, const std::string& default_kernel, double keep_default_pct) {
  bool any_final = false, any_pair = false;
  for (const CandidateResult& r : results) {
    any_final |= r.ok && r.us > 0 && r.finalist;
    any_pair |= r.ok && r.us > 0 && r.pair_x > 0;
  }
  auto competes = [&](const CandidateResult& r) {
    return r.ok && r.us > 0 && (!any_final || r.finalist) && (!any_pair || r.pair_x > 0);
  };
  // Speed: against the final round's pick where the pairwise round ran, else 1 / the final round's time.
  auto speed = [&](const CandidateResult& r) { return any_pair ? r.pair_x : 1.0 / r.us; };
  int best = -1;
  for (size_t i = 0; i < results.size(); ++i)
    if (competes(results[i]) && (best < 0 || speed(results[i]) > speed(results[size_t(best)]))) best = int(i);
  // The default is always a finalist (choose_finalists), so it competes here whenever it passed.
  const int dflt = default_index(results, default_kernel);
  if (best >= 0 && dflt >= 0 && best != dflt && competes(results[size_t(dflt)]) &&
      speed(results[size_t(best)]) * (1 - keep_default_pct / 100) < speed(results[size_t(dflt)]))
    return dflt;
  return best;
}

bool best_row(const Shape& s, const std::vector<CandidateResult>& results, const DeviceInfo& dev, TableRow* row,
              const std::string& default_kernel, double keep_default_pct) {
  const int pick = pick_index(results, default_kernel, keep_default_pct);
  if (pick < 0) return false;
  const CandidateResult* best = &results[size_t(pick)];
  if (const int dflt = default_index(results, default_kernel); dflt >= 0 && best->confirm_x > 0 && best->confirm_x <= 1)
    best = &results[size_t(dflt)];
  TableRow t;
  t.gfx = dev.arch;
  t.cu_num = dev.sm_count;
  t.shape = s;
  t.libtype = std::string(backend_name(best->backend));
  t.kernel_name = best->kernel;
  t.us = best->us;
  t.err_ratio = best->err_ratio;
  double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
  double bytes = double(dtype_size(s.dtype)) * (double(s.m) * s.k + double(s.n) * s.k) + double(dtype_size(s.outdtype)) * double(s.m) * s.n;
  t.tflops = flops / (best->us * 1e-6) / 1e12;
  t.bw = bytes / (best->us * 1e-6) / 1e9;
  // solidx: cuBLASLt's heuristic index for cublaslt_hN, else 0.
  if (best->kernel.rfind("cublaslt_h", 0) == 0) t.solidx = std::stoll(best->kernel.substr(10));
  *row = t;
  return true;
}

}  // namespace tgemm::bench
