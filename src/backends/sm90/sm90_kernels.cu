// Registration of the sm90 family and its untuned default: which configurations to try for a problem.
#include <algorithm>
#include <cmath>

#include "backends/sm90/sm90_launch.cuh"
#include "registry/registry.h"

namespace tgemm::sm90 {

void add_bf16_i32(std::vector<std::unique_ptr<Kernel>>& out);
void add_bf16_i64(std::vector<std::unique_ptr<Kernel>>& out);
void add_bf16_tma(std::vector<std::unique_ptr<Kernel>>& out);
void add_fp16_i32(std::vector<std::unique_ptr<Kernel>>& out);
void add_fp16_i64(std::vector<std::unique_ptr<Kernel>>& out);
void add_swapab(std::vector<std::unique_ptr<Kernel>>& out);

namespace {

// Relative efficiency of each configuration at full occupancy (1.0 = the cooperative 128x256); the rest of the
// score is how well the tiles fill the last wave and the edges. From the H200 measurements of runs 5 and 7
// (scripts/dev/SM90_NOTES.md): on run 7's 88 models.csv shapes with M >= 2048 this choice lands at median 1.000x
// cuBLASLt, min 0.853, two shapes below 0.9 (the best registered configuration per shape: 1.005, 0.853, one).
double tile_weight(const Config& c, const Problem& p) {
  double w;
  if (c.pingpong && c.bm == 64 && c.bn == 256) {
    // Unclustered: best up to M ~ 1e5 at every K measured. At M >= 262144 it measured 0.85-1.06x (bimodal), its
    // c2x1 twin 0.99-1.04x, so large M goes to the clustered one (or, without it, to the cooperative 128x256).
    w = c.cluster_m * c.cluster_n == 1 ? (p.m <= 131072 ? 1.05 : 0.97) : 1.03;
  } else if (c.pingpong) {
    w = 0.95;
  } else {
    // 128x160: run 7's models rows put the weight between 0.88 (below: the N = 1280 shapes stay on 64x256) and
    // 1.03 (above: it takes shapes such as 4096 x 3840 x 1280 where it is 5% behind); the middle of that range.
    w = c.bm == 128 && c.bn == 256   ? 1.00
        : c.bm == 128 && c.bn == 192 ? 0.95
        : c.bm == 128 && c.bn == 160 ? 0.95
        : c.bm == 128 && c.bn == 128 ? 0.97
        : c.bm == 256 && c.bn == 128 ? 0.97
                                     : 0.90;
  }
  return c.epi == EpiMode::direct ? 0.8 * w : w;  // the direct epilogue measured ~0.8x of staged
}

double score(const Sm90KernelBase& k, const Problem& p, int sms) {
  const Config& c = k.config();
  const double mt = std::ceil(double(p.m) / c.bm), nt = std::ceil(double(p.n) / c.bn);
  const double tiles = mt * nt;
  const double waves = std::ceil(tiles / sms);
  double wave_eff = tiles / (waves * sms);
  if (c.splitk) {
    // A stream-K tail is scored by its modelled round efficiency: it measured faster than the unsplit twin on every
    // shape where choose_splits gives one (run 132: +2-3% at 23-31 rounds, more at fewer). Every other split-K
    // configuration ranks behind its twin: unsplit it runs within ~1% of it (run 125), and where it splits every
    // tile (few tiles, long K) it beat the twin but not cuBLASLt on any shape of the suites re-tuned (run 126).
    // A column tail is scored the same way.
    const SplitChoice plan = k.split_choice(p);
    const bool tail = plan.splits > 1 && (plan.by_columns || plan.split_tiles != SplitPlan::kAllTiles);
    wave_eff = tail ? std::min(1.0, plan.eff) : 0.90 * wave_eff;
  }
  const double edge_eff = double(p.m) * double(p.n) / (mt * c.bm * nt * c.bn);
  return tile_weight(c, p) * wave_eff * edge_eff;
}

// Untuned default below this many rounds of tiles (of the best-scored configuration) on the SMs: none, so cuBLASLt
// runs it; the same candidates then stand after cuBLASLt as fallbacks, for what it refuses. With few tiles the
// persistent kernels' fixed start, partial last round and idle second consumer warpgroup dominate, where cuBLASLt has
// split-K and small-tile kernels. Over the 160 bf16 shapes of the suites with M > 64, the tune profile (first-round
// times deflated 7% to final-round ones) puts the untuned default at 0.876x cuBLASLt when it offers sm90 everywhere
// (0.57-0.88x at M = 128-1024), 1.002x from 1 round, 1.011x from 2, 1.012x from 4 (13 shapes below 0.97x), 1.012x
// from 6 (session 14).
inline constexpr double kMinDefaultRounds = 4;

// The sm90 configurations for `p`, best-scored first (at most three, each with its i32 and i64 variants), and
// whether they are few-tiled (see kMinDefaultRounds).
std::vector<const Kernel*> ranked_candidates(const std::vector<const Sm90KernelBase*>& all, const Problem& p,
                                             bool* few_tiles) {
  // Below ~64 rows the problem is memory-bound on W and a skinny kernel wins; leave it to that backend.
  if (p.m <= 64) return {};
  const int sms = current_sm_count();
  struct Cand {
    const Sm90KernelBase* i32;
    const Sm90KernelBase* i64;
    double score;
  };
  std::vector<Cand> cands;
  for (const Sm90KernelBase* k : all) {
    const Config& c = k->config();
    // The small-M skeleton is offered by a tuned table only, until its crossover with cuBLASLt is measured.
    // The TMA-store twins too: they have their staged twin's limits (no use as a fallback) and won or lost against
    // it by shape (run 102), which only a tuned table can tell.
    if (c.in != p.in_dtype || c.index_bits != 64 || c.swapab || c.epi == EpiMode::tma || k->dev_twin()) continue;
    Cand cd{nullptr, k, score(*k, p, sms)};
    for (const Sm90KernelBase* o : all) {
      Config oc = o->config();
      oc.index_bits = 64;
      if (o->config().index_bits == 32 && config_name(oc) == k->name()) cd.i32 = o;
    }
    cands.push_back(cd);
  }
  std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return a.score > b.score; });
  if (cands.size() > 3) cands.resize(3);
  if (!cands.empty()) {
    const Config& c = cands.front().i64->config();
    const double tiles = std::ceil(double(p.m) / c.bm) * std::ceil(double(p.n) / c.bn);
    *few_tiles = tiles < kMinDefaultRounds * sms;
  }
  std::vector<const Kernel*> out;
  for (const Cand& cd : cands) {
    // The i32 variant is as fast (its offsets are off the critical path) but addresses less: offer it first only
    // where it fits, so the dispatcher never has to split for it.
    if (cd.i32 && cd.i32->can_implement(p).ok()) {
      out.push_back(cd.i32);
      out.push_back(cd.i64);
    } else {
      out.push_back(cd.i64);
      if (cd.i32) out.push_back(cd.i32);
    }
  }
  return out;
}

}  // namespace

}  // namespace tgemm::sm90

namespace tgemm {

void add_sm90_kernels(BackendKernels& out) {
  out.backend = Backend::sm90;
  const size_t first = out.kernels.size();
  sm90::add_bf16_i32(out.kernels);
  sm90::add_bf16_i64(out.kernels);
  sm90::add_bf16_tma(out.kernels);
  sm90::add_fp16_i32(out.kernels);
  sm90::add_fp16_i64(out.kernels);
  sm90::add_swapab(out.kernels);
  std::vector<const sm90::Sm90KernelBase*> mine;
  for (size_t i = first; i < out.kernels.size(); ++i)
    mine.push_back(static_cast<const sm90::Sm90KernelBase*>(out.kernels[i].get()));
  // The ranked candidates are the untuned default where the tiles are many, and a fallback after cuBLASLt where
  // they are few (kMinDefaultRounds).
  auto when = [mine](bool few_tiles) {
    return [mine, few_tiles](const Problem& p) {
      bool few = false;
      std::vector<const Kernel*> c = sm90::ranked_candidates(mine, p, &few);
      return few == few_tiles ? c : std::vector<const Kernel*>{};
    };
  };
  out.defaults = when(false);
  out.fallbacks = when(true);
}

}  // namespace tgemm
