// The dispatcher on the host: bad input, plans and their reasons, the plan cache under threads, the untuned log.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/tune.h"
#include "common/temp_path.h"
#include "common/untabled_dispatcher.h"
#include "registry/registry.h"
#include "seed_problem.h"
#include "table/table.h"
#include "tgemm/tgemm.h"

namespace tgemm {
namespace {

// Fake device addresses: validation never dereferences them and nothing is launched.
void* addr(uintptr_t a) { return reinterpret_cast<void*>(a); }

struct BadCase {
  const char* name;
  MatrixView x, w, y;
  bool with_bias;
  VectorView bias;
  const char* message;
};

std::unique_ptr<Dispatcher> make_dispatcher(DispatcherOptions o = {}) {
  std::unique_ptr<Dispatcher> d;
  EXPECT_TRUE(testing::untabled_dispatcher(&d, o).ok());
  return d;
}

// A candidate's result as tune_shape reports it after checking and timing, for the pick tests (BestRow): a passing
// finalist unless `more` says otherwise, with its confirm- and pairwise-round figures where those ran.
struct CandidateMore {
  bool finalist = true, ok = true;
  double confirm_x = 0, pair_x = 0;
};
bench::CandidateResult candidate(const char* kernel, Backend b, double us, CandidateMore more = {}) {
  bench::CandidateResult r;
  r.kernel = kernel, r.backend = b, r.us = us, r.err_ratio = 0;
  r.finalist = more.finalist, r.ok = more.ok, r.confirm_x = more.confirm_x, r.pair_x = more.pair_x;
  return r;
}

TEST(BadInput, EveryCaseNamesTheArgument) {
  const uintptr_t X = 0x10000000, W = 0x20000000, Y = 0x30000000, B = 0x40000000;
  MatrixView x{addr(X), 64, 128, 128, DType::bf16}, w{addr(W), 32, 128, 128, DType::bf16}, y{addr(Y), 64, 32, 32, DType::bf16};
  VectorView b{addr(B), 32, DType::bf16};
  auto with = [&](auto f) {
    BadCase c{"", x, w, y, false, b, ""};
    f(c);
    return c;
  };
  std::vector<BadCase> cases = {
      with([&](BadCase& c) { c.name = "null x"; c.x.data = nullptr; c.message = "x: null data pointer"; }),
      with([&](BadCase& c) { c.name = "null w"; c.w.data = nullptr; c.message = "w: null data pointer"; }),
      with([&](BadCase& c) { c.name = "null y"; c.y.data = nullptr; c.message = "y: null data pointer"; }),
      with([&](BadCase& c) { c.name = "null bias"; c.with_bias = true; c.bias.data = nullptr; c.message = "bias: null data pointer"; }),
      with([&](BadCase& c) { c.name = "misaligned x"; c.x.data = addr(X + 1); c.message = "x: data pointer is not aligned"; }),
      with([&](BadCase& c) { c.name = "misaligned bias"; c.with_bias = true; c.bias.data = addr(B + 1); c.message = "bias: data pointer is not aligned"; }),
      with([&](BadCase& c) { c.name = "negative M"; c.x.rows = -1; c.message = "x.rows = -1 is negative"; }),
      with([&](BadCase& c) { c.name = "negative K"; c.x.cols = -5; c.message = "x.cols = -5 is negative"; }),
      with([&](BadCase& c) { c.name = "K mismatch"; c.w.cols = 127; c.w.ld = 127; c.message = "x.cols = 128 (K) differs from w.cols = 127"; }),
      with([&](BadCase& c) { c.name = "M mismatch"; c.y.rows = 63; c.message = "y.rows = 63 differs from x.rows = 64"; }),
      with([&](BadCase& c) { c.name = "N mismatch"; c.y.cols = 31; c.message = "y.cols = 31 differs from w.rows = 32"; }),
      with([&](BadCase& c) { c.name = "ld too small"; c.x.ld = 100; c.message = "x.ld = 100 < x.cols = 128"; }),
      with([&](BadCase& c) { c.name = "ldy too small"; c.y.ld = 16; c.message = "y.ld = 16 < y.cols = 32"; }),
      with([&](BadCase& c) { c.name = "fp32 input"; c.x.dtype = DType::fp32; c.w.dtype = DType::fp32; c.message = "x.dtype = fp32 not supported"; }),
      with([&](BadCase& c) { c.name = "mixed inputs"; c.w.dtype = DType::fp16; c.message = "w.dtype = fp16 differs from x.dtype = bf16"; }),
      with([&](BadCase& c) { c.name = "bad dtype value"; c.y.dtype = DType(7); c.message = "y.dtype = 7 is not a dtype"; }),
      with([&](BadCase& c) { c.name = "bias dtype"; c.with_bias = true; c.bias.dtype = DType::fp16; c.message = "bias.dtype = fp16 must be the input dtype (bf16) or fp32"; }),
      with([&](BadCase& c) { c.name = "bias size"; c.with_bias = true; c.bias.size = 31; c.message = "bias.size = 31 differs from w.rows = 32"; }),
      with([&](BadCase& c) { c.name = "overflow M*ld"; c.x.rows = int64_t(1) << 62; c.y.rows = c.x.rows; c.message = "x: rows*ld*elem_size overflows"; }),
      with([&](BadCase& c) { c.name = "overflow M*N"; c.x.rows = int64_t(1) << 40; c.y.rows = c.x.rows; c.y.cols = 32; c.y.ld = int64_t(1) << 30; c.x.ld = 128;
                             c.message = "overflows the address space"; }),
      with([&](BadCase& c) { c.name = "y aliases x"; c.y.data = addr(X + 64); c.message = "y overlaps x"; }),
      with([&](BadCase& c) { c.name = "y aliases bias"; c.with_bias = true; c.bias.data = addr(Y + 128); c.message = "y overlaps bias"; }),
  };
  auto d = make_dispatcher();
  for (const BadCase& c : cases) {
    Status s = d->mm(c.x, c.w, c.with_bias ? &c.bias : nullptr, c.y, nullptr);
    EXPECT_EQ(s.code(), StatusCode::invalid_argument) << c.name << ": " << s.to_string();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.name << ": got '" << s.message() << "'";
  }
  EXPECT_EQ(d->plan_cache_size(), 0u) << "nothing was planned for rejected input";
}

TEST(BadInput, EmptyProblemsAreNoOps) {
  auto d = make_dispatcher();
  MatrixView x{nullptr, 0, 128, 128, DType::bf16}, w{addr(0x1000), 32, 128, 128, DType::bf16}, y{nullptr, 0, 32, 32, DType::bf16};
  EXPECT_TRUE(d->mm(x, w, nullptr, y, nullptr).ok());
  MatrixView x2{addr(0x2000), 4, 128, 128, DType::bf16}, w2{nullptr, 0, 128, 128, DType::bf16}, y2{nullptr, 4, 0, 1, DType::bf16};
  EXPECT_TRUE(d->mm(x2, w2, nullptr, y2, nullptr).ok());
}

Problem seed(int64_t m) {
  Problem p;
  p.m = m, p.n = 6144, p.k = 1280, p.ldx = 1280, p.ldw = 1280, p.ldy = 6144, p.has_bias = true;
  return p;
}

std::string joined(const Plan& p) {
  std::string s;
  for (auto& c : p.chain) s += c + "\n";
  return s;
}

TEST(Plan, SeedShapeChainHasTheNumbers) {
  auto d = make_dispatcher();
  Plan p = d->make_plan(seed(768000), DeviceInfo{});
  ASSERT_TRUE(p.status.ok()) << p.status.to_string();
  std::string s = joined(p);
  EXPECT_NE(s.find("M*N = 4718592000 >= 2^31"), std::string::npos) << s;
  EXPECT_NE(s.find("padded M level 1 = 8192"), std::string::npos) << s;
  EXPECT_NE(s.find("plan: "), std::string::npos) << s;
}

TEST(Plan, TableRowIsTheFirstCandidateAndLimitsAreCheckedOnTheRealProblem) {
  // A table that maps M=8192 to an int32-offset kernel, as AITER's did: the 768000-row problem must be
  // split (or moved), never run whole.
  const Kernel* i32 = nullptr;
  for (const Kernel* k : kernels())
    if (k->limits().y_index_bits == 32 && (k->limits().in_dtypes & dtype_bit(DType::bf16)) && !i32) i32 = k;
  if (!i32) GTEST_SKIP() << "no int32-offset kernel registered in this build";
  std::string path = testing::temp_path("seed_table.csv");
  std::ofstream(path) << TunedTable::header() << "\nsm90,132,8192,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,"
                      << backend_name(i32->backend()) << ",0,1,100.0," << i32->name() << ",0,700,900\n";
  DispatcherOptions o;
  o.table_paths = {path};
  auto d = make_dispatcher(o);
  ASSERT_TRUE(d->load_tables({path}).ok());
  Plan p = d->make_plan(seed(768000), DeviceInfo{});
  ASSERT_TRUE(p.status.ok());
  std::string s = joined(p);
  EXPECT_NE(s.find("padded M level 1 = 8192 hit"), std::string::npos) << s;
  EXPECT_NE(s.find("addressing limit"), std::string::npos) << s;
  EXPECT_EQ(p.kernel, i32) << s;
  EXPECT_GE(p.pieces.size(), 3u) << s;
  for (const Piece& pc : p.pieces) EXPECT_LE((pc.m - 1) * 6144 + 6143, 2147483647LL);
  Plan small = d->make_plan(seed(8192), DeviceInfo{});
  EXPECT_EQ(small.pieces.size(), 1u);
  std::filesystem::remove(path);
}

TEST(Plan, ConfiguredVendorAlgorithmIsNotTakenFromARowTunedAtSmallerM) {
  // A configured cuBLASLt algorithm is vouched for only by cuBLASLt's check and has run only at its tuned shape.
  // Through the seed incident's mapping (padded M level 1 = 8192) it must not reach a larger problem; at its own M it
  // stays the table's candidate.
  const std::string configured = "cublaslt_a66_t29_s35_k1_r0_w0_c3_i0_cl5";
  const Kernel* k = Registry::get().find(configured);
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->tuned_shape_only());
  const Kernel* dflt = Registry::get().find("cublaslt");
  ASSERT_NE(dflt, nullptr);
  EXPECT_FALSE(dflt->tuned_shape_only()) << "cuBLASLt's heuristic answers are chosen for the problem at hand";
  std::string path = testing::temp_path("configured_table.csv");
  std::ofstream(path) << TunedTable::header() << "\nsm90,132,8192,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,"
                      << "cublaslt,0,1,160.0," << configured << ",0,800,900\n";
  auto d = make_dispatcher();
  ASSERT_TRUE(d->load_tables({path}).ok());
  Plan big = d->make_plan(seed(340000), DeviceInfo{});
  std::string s = joined(big);
  EXPECT_NE(s.find("padded M level 1 = 8192 hit"), std::string::npos) << s;
  EXPECT_NE(s.find(configured + " was only checked at the tuned M=8192"), std::string::npos) << s;
  EXPECT_EQ(s.find("candidate " + configured), std::string::npos) << s;
  EXPECT_NE(big.kernel, k) << s;
  Plan own = d->make_plan(seed(8192), DeviceInfo{});
  s = joined(own);
  EXPECT_NE(s.find("exact M=8192 hit"), std::string::npos) << s;
  EXPECT_NE(s.find("candidate " + configured + " (table"), std::string::npos) << s;
  std::filesystem::remove(path);
}

// A table whose name ends in "_eager.csv" holds rows timed with plain launches: the dispatcher takes them for launches
// outside a CUDA-graph capture and the ordinary table's under capture, planning each mode apart (its own cache entry),
// and a graph plan says when the eager one differs, so mm asks the stream only then.
TEST(Plan, EagerTableServesLaunchesOutsideACapture) {
  const std::string graph_k = "skinny_bf16_m16_ws_sk8_i64", eager_k = "cublaslt";
  ASSERT_NE(Registry::get().find(graph_k), nullptr);
  auto row = [](int64_t m, const std::string& lib, const std::string& k) {
    return "sm90,132," + std::to_string(m) + ",4096,4096,False,torch.bfloat16,torch.bfloat16,False,False," + lib + ",0,1,10.0," + k +
           ",0,3,3000\n";
  };
  const std::string graph = testing::temp_path("decode_table.csv"), eager = testing::temp_path("decode_table_eager.csv");
  std::ofstream(graph) << TunedTable::header() << "\n" << row(8, "skinny", graph_k) << row(4, "skinny", graph_k)
                       << row(1, "skinny", graph_k);
  // M = 8: another kernel for eager launches; M = 4: the same one (nothing to plan apart); M = 16: eager only, which
  // padded M reaches from M = 9 (no graph row) but not from M = 1 (the graph table's exact row is closer).
  std::ofstream(eager) << TunedTable::header() << "\n" << row(8, "cublaslt", eager_k) << row(4, "skinny", graph_k)
                       << row(16, "cublaslt", eager_k);
  EXPECT_TRUE(is_eager_table(eager));
  EXPECT_FALSE(is_eager_table(graph));
  EXPECT_FALSE(is_eager_table("eager.csv"));
  EXPECT_FALSE(is_eager_table("t_eager.csv.bak"));
  auto d = make_dispatcher();
  ASSERT_TRUE(d->load_tables({graph, eager}).ok());
  EXPECT_NE(d->tables_summary().find("3 rows (+3 for eager launches)"), std::string::npos) << d->tables_summary();
  Problem p;
  p.m = 8, p.n = 4096, p.k = 4096, p.ldx = 4096, p.ldw = 4096, p.ldy = 4096;
  const Plan& g = d->plan(p, DeviceInfo{});
  ASSERT_TRUE(g.status.ok()) << g.status.to_string();
  EXPECT_EQ(g.kernel->name(), graph_k) << joined(g);
  EXPECT_EQ(g.mode, LaunchMode::graph);
  EXPECT_TRUE(g.eager_differs);
  EXPECT_NE(joined(g).find("eager launches: " + eager + ":2 names cublaslt"), std::string::npos) << joined(g);
  const Plan& e = d->plan(p, DeviceInfo{}, LaunchMode::eager);
  ASSERT_TRUE(e.status.ok()) << e.status.to_string();
  EXPECT_EQ(e.kernel->name(), eager_k) << joined(e);
  EXPECT_EQ(e.mode, LaunchMode::eager);
  EXPECT_NE(joined(e).find("eager table: exact M=8 hit -> " + eager + ":2"), std::string::npos) << joined(e);
  // The graph table's row stays the next candidate of an eager plan.
  EXPECT_NE(joined(e).find("table: exact M=8 hit -> " + graph + ":2"), std::string::npos) << joined(e);
  EXPECT_EQ(d->plan_cache_size(), 2u);
  EXPECT_EQ(&d->plan(p, DeviceInfo{}), &g);
  p.m = 4;
  EXPECT_FALSE(d->plan(p, DeviceInfo{}).eager_differs) << joined(d->plan(p, DeviceInfo{}));
  // Padded M reaches eager rows as it reaches graph ones, where the graph table has no closer row.
  p.m = 9;
  EXPECT_TRUE(d->plan(p, DeviceInfo{}).eager_differs) << joined(d->plan(p, DeviceInfo{}));
  EXPECT_EQ(d->plan(p, DeviceInfo{}, LaunchMode::eager).kernel->name(), eager_k);
  p.m = 1;
  EXPECT_FALSE(d->plan(p, DeviceInfo{}).eager_differs) << joined(d->plan(p, DeviceInfo{}));
  const Plan& e1 = d->plan(p, DeviceInfo{}, LaunchMode::eager);
  EXPECT_EQ(e1.kernel->name(), graph_k) << joined(e1);
  EXPECT_NE(joined(e1).find("the table's row is closer to this M"), std::string::npos) << joined(e1);
  // Without an eager table nothing changes and no plan asks for the stream's mode.
  ASSERT_TRUE(d->load_tables({graph}).ok());
  p.m = 8;
  EXPECT_FALSE(d->plan(p, DeviceInfo{}).eager_differs);
  EXPECT_EQ(d->make_plan(p, DeviceInfo{}, "", LaunchMode::eager).kernel->name(), graph_k);
  std::filesystem::remove(graph);
  std::filesystem::remove(eager);
}

TEST(Plan, ForcedUnknownKernelIsAnError) {
  auto d = make_dispatcher();
  Plan p = d->make_plan(seed(16), DeviceInfo{}, "sm90_nonexistent");
  EXPECT_EQ(p.status.code(), StatusCode::invalid_argument);
  EXPECT_NE(p.status.message().find("unknown kernel 'sm90_nonexistent'"), std::string::npos);
}

// The TMA-store twins (`_etma`) store Y through a tensor map instead of offsets formed in the kernel. Each must refuse
// and accept exactly what its staged i64 twin does, except a 16-bit Y whose N is no multiple of 8 (a TMA store writes
// whole 16-byte chunks, so the last one would reach into Y's padding), and the untuned default never offers them: they
// won or lost against the twin by shape (run 102), which only a tuned table can tell.
TEST(Plan, TmaStoreTwinsTakeTheirTwinsProblemsAndOnlyATableOffersThem) {
  std::vector<Problem> probe;
  for (int64_t m : {int64_t(1), int64_t(77), int64_t(2048), int64_t(8192), int64_t(768000), int64_t(1) << 31})
    probe.push_back(seed(m));
  Problem odd = seed(8192);
  odd.ldy = 6145;  // not a multiple of 8 elements: no TMA stride
  probe.push_back(odd);
  Problem wide = seed(300);
  wide.n = 520, wide.k = 1288, wide.ldw = 1288, wide.ldx = 1288, wide.ldy = 4104, wide.out_dtype = DType::fp32;
  probe.push_back(wide);
  Problem half = seed(4096);
  half.in_dtype = DType::fp16;  // bf16-only twins
  probe.push_back(half);
  Problem odd_n = seed(257);
  odd_n.n = 383, odd_n.ldy = 384;  // the last 16-byte chunk of a row: 7 columns of Y and 1 of padding
  Problem odd_n32 = odd_n;
  odd_n32.out_dtype = DType::fp32;  // stored from registers: no TMA store
  probe.push_back(odd_n32);
  int twins = 0;
  for (const Kernel* k : kernels()) {
    const size_t at = k->name().find("_etma");
    if (at == std::string::npos) continue;
    ++twins;
    std::string staged = k->name().substr(0, at) + k->name().substr(at + 5);
    // A split-K TMA-store kernel without a staged split-K twin has the limits of the staged unsplit one.
    if (!find_kernel(staged) && staged.find("_skauto") != std::string::npos) staged.erase(staged.find("_skauto"), 7);
    const Kernel* t = find_kernel(staged);
    ASSERT_NE(t, nullptr) << k->name() << ": no staged twin " << staged;
    EXPECT_EQ(k->limits().y_index_bits, 64) << k->name();
    for (const Problem& p : probe) {
      const Verdict a = k->can_implement(p), b = t->can_implement(p);
      EXPECT_EQ(a.ok(), b.ok()) << k->name() << " M=" << p.m << ": " << a.reason << " / " << b.reason;
    }
    const Verdict a = k->can_implement(odd_n), b = t->can_implement(odd_n);
    EXPECT_TRUE(b.ok()) << staged << ": " << b.reason;
    EXPECT_EQ(a.kind, Verdict::Kind::unsupported) << k->name();
    EXPECT_NE(a.reason.find("16-byte chunks"), std::string::npos) << a.reason;
  }
  if (twins == 0) GTEST_SKIP() << "no TMA-store kernel registered in this build";
  auto d = make_dispatcher();
  for (int64_t m : {128, 2048, 8192, 65536, 768000}) {
    Plan pl = d->make_plan(seed(m), DeviceInfo{});
    ASSERT_TRUE(pl.status.ok()) << joined(pl);
    EXPECT_EQ(joined(pl).find("_etma"), std::string::npos) << joined(pl);
  }
}

TEST(Plan, CublasLtIsTheLastResort) {
  auto d = make_dispatcher();
  Problem p = seed(8192);
  p.ldx = 1281;  // odd leading dimension: TMA kernels cannot take it
  Plan pl = d->make_plan(p, DeviceInfo{});
  ASSERT_TRUE(pl.status.ok());
  EXPECT_EQ(pl.kernel->backend(), Backend::cublaslt) << joined(pl);
}

// 16 < M <= 64 goes to sm90 / cuBLASLt by default (skinny's m32 / m64 tiles lose there), but what neither can run
// still runs: skinny is the fallback after cuBLASLt.
TEST(Plan, SkinnyIsTheFallbackAfterCublasLtAboveM16) {
  auto d = make_dispatcher();
  Problem p;
  p.m = 37, p.n = 53, p.k = 71, p.ldx = 71, p.ldw = 71, p.ldy = 53;
  p.has_bias = true, p.bias_dtype = DType::fp32;  // cuBLASLt's bias epilogue refuses an fp32 bias for bf16 Y
  Plan pl = d->make_plan(p, DeviceInfo{});
  ASSERT_TRUE(pl.status.ok()) << joined(pl);
  EXPECT_EQ(pl.kernel->backend(), Backend::skinny) << joined(pl);
  EXPECT_EQ(pl.source, "fallback") << joined(pl);
  p.has_bias = false;  // cuBLASLt can: it comes first
  pl = d->make_plan(p, DeviceInfo{});
  ASSERT_TRUE(pl.status.ok()) << joined(pl);
  EXPECT_EQ(pl.kernel->backend(), Backend::cublaslt) << joined(pl);
}

// The untuned default for 16 < M <= 64 puts nothing before cuBLASLt (the ws kernels of M tile 32 / 64 measured
// 0.51-0.98x cuBLASLt on the decode layers, ws-4; M tile 32 with mma.sync wins 2 of the 12 at M = 32, run 69, which
// a tuned table picks); what cuBLASLt refuses with 16-byte rows goes to the persistent
// kernel of M tile 64, which splits K across blocks only where K >= 8192 and row tiles are few, with a workspace.
TEST(Plan, PersistentM64IsTheFirstFallbackAboveM16) {
  auto d = make_dispatcher();
  const int64_t layers[][2] = {{4096, 4096}, {28672, 4096}, {1280, 8192}, {3584, 18944}};
  for (auto [n, k] : layers)
    for (int64_t m : {int64_t(17), int64_t(32), int64_t(48), int64_t(64)}) {
      Problem p;
      p.m = m, p.n = n, p.k = k, p.ldx = k, p.ldw = k, p.ldy = n;
      Plan pl = d->make_plan(p, DeviceInfo{});
      ASSERT_TRUE(pl.status.ok()) << joined(pl);
      EXPECT_EQ(pl.kernel->backend(), Backend::cublaslt) << m << "x" << n << "x" << k << ": " << joined(pl);
      p.has_bias = true, p.bias_dtype = DType::fp32;  // cuBLASLt's bias epilogue refuses an fp32 bias for bf16 Y
      pl = d->make_plan(p, DeviceInfo{});
      ASSERT_TRUE(pl.status.ok()) << joined(pl);
      if (pl.kernel->backend() == Backend::sm90) continue;  // builds with sm90 may take it first
      EXPECT_EQ(pl.kernel->name(), "skinny_bf16_m64_ws_skauto_i64") << m << "x" << n << "x" << k << ": " << joined(pl);
      EXPECT_EQ(pl.source, "fallback") << joined(pl);
      // 64 or 56 (WK = 2) row tiles: 2 splits at 3584x18944, 20 at 1280x8192: counters + fp32 partial tiles.
      const bool split = k >= 8192 && n <= 4096;
      EXPECT_EQ(pl.workspace_bytes > 0, split) << m << "x" << n << "x" << k << ": " << pl.workspace_bytes;
    }
}

// The untuned default offers sm90 only from 4 rounds of tiles on the SMs (132 without a GPU): with fewer, cuBLASLt
// runs the problem (sm90's fixed costs dominate; the suites' profile put sm90 at 0.57-0.88x cuBLASLt at M = 128-1024),
// and the sm90 kernels stand after it for what it refuses (an fp32 bias for bf16 Y).
TEST(Plan, FewTilesGoToCublasLtWithSm90AsTheFallback) {
  bool sm90 = false;
  for (const Kernel* k : kernels()) sm90 |= k->backend() == Backend::sm90;
  if (!sm90) GTEST_SKIP() << "no sm90 kernel registered in this build";
  auto d = make_dispatcher();
  const int64_t shapes[][3] = {{256, 4096, 14336}, {1024, 1024, 4096}, {2048, 2048, 1024}, {128, 1280, 8192}};
  for (auto [m, n, k] : shapes) {
    Problem p;
    p.m = m, p.n = n, p.k = k, p.ldx = k, p.ldw = k, p.ldy = n;
    Plan pl = d->make_plan(p, DeviceInfo{});
    ASSERT_TRUE(pl.status.ok()) << joined(pl);
    EXPECT_EQ(pl.kernel->backend(), Backend::cublaslt) << m << "x" << n << "x" << k << ": " << joined(pl);
    EXPECT_EQ(pl.source, "vendor") << joined(pl);
    p.has_bias = true, p.bias_dtype = DType::fp32;
    pl = d->make_plan(p, DeviceInfo{});
    ASSERT_TRUE(pl.status.ok()) << joined(pl);
    EXPECT_EQ(pl.kernel->backend(), Backend::sm90) << m << "x" << n << "x" << k << ": " << joined(pl);
    EXPECT_EQ(pl.source, "fallback") << joined(pl);
  }
  // Many tiles: sm90 first (8192 x 6144: 3072 tiles of 64x256, 23 rounds).
  Plan pl = d->make_plan(seed(8192), DeviceInfo{});
  ASSERT_TRUE(pl.status.ok()) << joined(pl);
  EXPECT_EQ(pl.kernel->backend(), Backend::sm90) << joined(pl);
  EXPECT_EQ(pl.source, "heuristic") << joined(pl);
}

// The untuned default takes the split-K variant where its plan is a tail (a last round at most half full; 132 SMs
// without a GPU): 8192 x 6144 x 4096 (3072 tiles of 64x256: 23 rounds + 36) with a k-range tail measured 2.5% faster
// (run 132), 8192 x 6144 x 1280 with a column tail 2.1% (run 144). At 65536 rows (186 rounds + 24: the model's gain
// under 1%) the unsplit twin stays first.
TEST(Plan, DefaultTakesATailWhereItPays) {
  if (!find_kernel("sm90_bf16_64x256x64_s5_c1x1_pp_skauto_i32")) GTEST_SKIP() << "no sm90 split-K kernel in this build";
  auto d = make_dispatcher();
  auto first = [&](int64_t m, int64_t n, int64_t k) {
    Problem p;
    p.m = m, p.n = n, p.k = k, p.ldx = k, p.ldw = k, p.ldy = n;
    Plan pl = d->make_plan(p, DeviceInfo{});
    EXPECT_TRUE(pl.status.ok()) << joined(pl);
    return pl.status.ok() ? pl.kernel->name() : std::string("none");
  };
  EXPECT_EQ(first(8192, 6144, 4096), "sm90_bf16_64x256x64_s5_c1x1_pp_skauto_i32");
  EXPECT_EQ(first(8192, 6144, 1280), "sm90_bf16_64x256x64_s5_c1x1_pp_skauto_i32");
  // `tgemm explain` says how: the plan's chain ends with the kernel's run.
  Problem p;
  p.m = 8192, p.n = 6144, p.k = 1280, p.ldx = 1280, p.ldw = 1280, p.ldy = 6144;
  const Plan pl = d->make_plan(p, DeviceInfo{});
  ASSERT_FALSE(pl.chain.empty());
  EXPECT_NE(pl.chain.back().find("the last 36 of 3072 tiles of 64x256 as two column halves"), std::string::npos)
      << joined(pl);
  EXPECT_EQ(first(65536, 6144, 4096), "sm90_bf16_64x256x64_s5_c1x1_pp_i32");
  EXPECT_EQ(first(65536, 6144, 1280), "sm90_bf16_64x256x64_s5_c1x1_pp_i32");
}

TEST(PlanCache, ConcurrentThreadsGetOnePlanPerShape) {
  auto d = make_dispatcher();
  std::vector<Problem> shapes;
  for (int64_t m : {1, 7, 64, 333, 8192, 360000, 768000}) shapes.push_back(seed(m));
  std::vector<std::vector<const Plan*>> seen(8, std::vector<const Plan*>(shapes.size()));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 200; ++rep)
        for (size_t i = 0; i < shapes.size(); ++i) {
          const Plan& p = d->plan(shapes[(i + size_t(t)) % shapes.size()], DeviceInfo{});
          if (rep == 0) seen[size_t(t)][(i + size_t(t)) % shapes.size()] = &p;
        }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(d->plan_cache_size(), shapes.size());
  for (int t = 1; t < 8; ++t)
    for (size_t i = 0; i < shapes.size(); ++i) EXPECT_EQ(seen[size_t(t)][i], seen[0][i]);
}

TEST(UntunedLog, EachShapeAppendedOnce) {
  std::string path = testing::temp_path("untuned_test.csv");
  std::filesystem::remove(path);
  DispatcherOptions o;
  o.untuned_log = path;
  {
    auto d = make_dispatcher(o);
    for (int rep = 0; rep < 3; ++rep)
      for (int64_t m : {16, 8192, 16}) (void)d->plan(seed(m), DeviceInfo{});
  }
  {
    auto d = make_dispatcher(o);  // a second process-like instance: shapes already in the file are not repeated
    (void)d->plan(seed(16), DeviceInfo{});
    (void)d->plan(seed(32), DeviceInfo{});
  }
  std::vector<Shape> got;
  ASSERT_TRUE(read_shapes(path, &got).ok());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].m, 16);
  EXPECT_EQ(got[1].m, 8192);
  EXPECT_EQ(got[2].m, 32);
  std::filesystem::remove(path);
}

TEST(Tables, MergedConfigLowestUsWins) {
  std::string a = testing::temp_path("a.csv"), b = testing::temp_path("b.csv");
  std::ofstream(a) << TunedTable::header() << "\nsm90,132,64,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,cublaslt,0,1,20.0,cublaslt,0,1,1\n";
  std::ofstream(b) << TunedTable::header() << "\nsm90,132,64,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,skinny,0,1,10.0,skinny_bf16_m64_sk2_i64,0,1,1\n"
                   << "gfx950,256,64,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,hipblaslt,0,1,10.0,x,0,1,1\n";
  auto d = make_dispatcher();
  ASSERT_TRUE(d->load_tables({a, b}).ok());
  EXPECT_NE(d->tables_summary().find("1 rows for other archs skipped"), std::string::npos) << d->tables_summary();
  Plan p = d->make_plan(seed(64), DeviceInfo{});
  EXPECT_EQ(p.kernel->name(), "skinny_bf16_m64_sk2_i64") << joined(p);
  std::ofstream(b) << "garbage\n";
  Status s = d->load_tables({a, b});
  EXPECT_EQ(s.code(), StatusCode::parse_error);
  EXPECT_NE(s.message().find(b + ":1:1"), std::string::npos) << s.message();
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

}  // namespace
}  // namespace tgemm

namespace tgemm {
namespace {

using testing::seed_problem;

// The tuner's candidates: split plans where only addressing stops a kernel, never a small-M kernel sliced by M.
TEST(TuneCandidates, Int32KernelsSplitAtTheSeedShapeSkinnyNeverSliced) {
  const auto all = Registry::get().all();
  auto has = [&](Backend b) { return std::any_of(all.begin(), all.end(), [&](const Kernel* k) { return k->backend() == b; }); };
  // The sanitizer builds leave sm90 out (scripts/test.sh).
  if (!has(Backend::sm90) || !has(Backend::skinny)) GTEST_SKIP() << "this build has no sm90 or no skinny kernels";
  auto d = make_dispatcher();
  const DeviceInfo dev;
  for (int64_t m : {int64_t(340000), int64_t(768000)}) {
    std::vector<Plan> cands = bench::tune_candidates(*d, seed_problem(m), dev, bench::TuneOptions{});
    size_t split = 0, sm90 = 0;
    for (const Plan& pl : cands) {
      EXPECT_NE(pl.kernel->backend(), Backend::skinny) << m << ": " << pl.kernel->name();
      EXPECT_LE(pl.pieces.size(), 16u) << pl.kernel->name();
      sm90 += pl.kernel->backend() == Backend::sm90;
      if (pl.pieces.size() > 1) {
        ++split;
        EXPECT_EQ(pl.kernel->limits().y_index_bits, 32) << pl.kernel->name();
      }
    }
    EXPECT_GT(sm90, 0u) << m;
    // M*N = 2.09e9 < 2^31 at 340000: every int32 kernel whole; 4.7e9 at 768000: each of them split.
    if (m == 340000) EXPECT_EQ(split, 0u);
    else EXPECT_GT(split, 0u);
  }
  std::vector<Plan> decode = bench::tune_candidates(*d, seed_problem(8), dev, bench::TuneOptions{});
  EXPECT_TRUE(std::any_of(decode.begin(), decode.end(), [](const Plan& p) { return p.kernel->backend() == Backend::skinny; }));
}

// The tuner's pick (tgemm tune): finalists only where a final round ran, and cuBLASLt's default kept unless another
// candidate beats it by more than the margin: the bench measures the pick against that default.
TEST(BestRow, FinalRoundDecidesAndTheDefaultStaysWithinTheMargin) {
  const Shape s{4096, 4096, 4096};
  const DeviceInfo dev;
  TableRow row;
  std::vector<bench::CandidateResult> res = {
      candidate("cublaslt", Backend::cublaslt, 100), candidate("cublaslt_h5", Backend::cublaslt, 98.5),
      candidate("sm90_x", Backend::sm90, 90, {.finalist = false}),  // fastest in the first round only: not a finalist
      candidate("skinny_y", Backend::skinny, 50, {.ok = false})     // failed its check
  };
  ASSERT_TRUE(bench::best_row(s, res, dev, &row, "cublaslt", 2.0));
  EXPECT_EQ(row.kernel_name, "cublaslt");  // 1.5% faster: within the 2% margin
  ASSERT_TRUE(bench::best_row(s, res, dev, &row, "cublaslt", 1.0));
  EXPECT_EQ(row.kernel_name, "cublaslt_h5");
  EXPECT_EQ(row.solidx, 5);
  EXPECT_DOUBLE_EQ(row.us, 98.5);
  res[1].us = 97.0;
  ASSERT_TRUE(bench::best_row(s, res, dev, &row, "cublaslt", 2.0));
  EXPECT_EQ(row.kernel_name, "cublaslt_h5");
  // No final round: every passing candidate competes.
  for (auto& r : res) r.finalist = false;
  ASSERT_TRUE(bench::best_row(s, res, dev, &row, "cublaslt", 2.0));
  EXPECT_EQ(row.kernel_name, "sm90_x");
  EXPECT_EQ(row.libtype, "sm90");
  // Nothing passed.
  for (auto& r : res) r.ok = false;
  EXPECT_FALSE(bench::best_row(s, res, dev, &row, "cublaslt", 2.0));
}

// The confirm round (TuneOptions::confirm): a pick that was not faster than cuBLASLt's default when the two were
// timed again A B A B gives its row back to the default; one that was keeps it. pick_index ignores the round.
TEST(BestRow, ConfirmRoundRevertsAPickNotFasterThanTheDefault) {
  const Shape s{256, 7168, 8192};
  const DeviceInfo dev;
  TableRow row;
  std::vector<bench::CandidateResult> res = {candidate("cublaslt", Backend::cublaslt, 100),
                                             candidate("cublaslt_h2", Backend::cublaslt, 95, {.confirm_x = 0.99}),
                                             candidate("sm90_x", Backend::sm90, 97)};
  EXPECT_EQ(bench::pick_index(res, "cublaslt", 2.0), 1);
  ASSERT_TRUE(bench::best_row(s, res, dev, &row, "cublaslt", 2.0));
  EXPECT_EQ(row.kernel_name, "cublaslt");
  EXPECT_DOUBLE_EQ(row.us, 100);
  EXPECT_EQ(row.solidx, 0);
  res[1].confirm_x = 1.0;  // even: not faster
  ASSERT_TRUE(bench::best_row(s, res, dev, &row, "cublaslt", 2.0));
  EXPECT_EQ(row.kernel_name, "cublaslt");
  res[1].confirm_x = 1.004;
  ASSERT_TRUE(bench::best_row(s, res, dev, &row, "cublaslt", 2.0));
  EXPECT_EQ(row.kernel_name, "cublaslt_h2");
  EXPECT_DOUBLE_EQ(row.us, 95);
  res[1].confirm_x = 0;  // no confirm round ran (--no-confirm)
  ASSERT_TRUE(bench::best_row(s, res, dev, &row, "cublaslt", 2.0));
  EXPECT_EQ(row.kernel_name, "cublaslt_h2");
  // Only the pick's own verdict counts: a vetoed runner-up changes nothing.
  res[2].confirm_x = 0.9;
  ASSERT_TRUE(bench::best_row(s, res, dev, &row, "cublaslt", 2.0));
  EXPECT_EQ(row.kernel_name, "cublaslt_h2");
}

// The pairwise round (TuneOptions::pair_repeats): where it ran, the finalists it measured are ranked by their speed
// against the final round's pick (pair_x), not by the final round's times, and the default keeps its margin there.
TEST(BestRow, PairwiseRoundRanksTheFinalistsItMeasured) {
  const Shape s{2048, 6144, 4096};
  const DeviceInfo dev;
  TableRow row;
  // The final round had sm90_x fastest (the pick, pair_x 1); 2-way against it, cublaslt_h7 read 4% faster and the
  // default 1% faster.
  std::vector<bench::CandidateResult> res = {candidate("cublaslt", Backend::cublaslt, 100, {.pair_x = 1.01}),
                                             candidate("sm90_x", Backend::sm90, 95, {.pair_x = 1.0}),
                                             candidate("cublaslt_h7", Backend::cublaslt, 97, {.pair_x = 1.04}),
                                             candidate("sm90_y", Backend::sm90, 90, {.finalist = false})};  // not a finalist
  EXPECT_EQ(bench::pick_index(res, "cublaslt", 2.0), 2);
  ASSERT_TRUE(bench::best_row(s, res, dev, &row, "cublaslt", 2.0));
  EXPECT_EQ(row.kernel_name, "cublaslt_h7");
  EXPECT_EQ(row.solidx, 7);
  EXPECT_DOUBLE_EQ(row.us, 97);  // the row keeps the final round's time
  // 1.04 / 1.025 is within the 2% margin: the default stays.
  res[0].pair_x = 1.025;
  EXPECT_EQ(bench::pick_index(res, "cublaslt", 2.0), 0);
  EXPECT_EQ(bench::pick_index(res, "cublaslt", 1.0), 2);
  // A finalist the pairwise round could not time (pair_x 0) does not compete, whatever its final-round time.
  res[0].pair_x = 0.97;
  res[2].pair_x = 0;
  res[2].us = 50;
  EXPECT_EQ(bench::pick_index(res, "cublaslt", 2.0), 1);
  // No pairwise round: the final round's times decide, as before.
  for (auto& r : res) r.pair_x = 0;
  EXPECT_EQ(bench::pick_index(res, "cublaslt", 2.0), 2);
}

// The tuner's final round: the fastest few, cuBLASLt's default, and the fastest of every backend, so that the
// round that decides always compares our kernels with cuBLASLt (at 65536 x 6144 x 1280 the first round
// ranked four cuBLASLt algorithms ahead of our fastest kernel, which the final round then never timed; run 111).
TEST(ChooseFinalists, TopFewTheDefaultAndEachBackendsFastest) {
  auto cand = [](const char* k, Backend b) {
    bench::CandidateResult r;
    r.kernel = k, r.backend = b, r.ok = true;
    return r;
  };
  const std::vector<bench::CandidateResult> res = {
      cand("cublaslt_h1", Backend::cublaslt), cand("cublaslt_h2", Backend::cublaslt),
      cand("cublaslt_h3", Backend::cublaslt), cand("cublaslt_h5", Backend::cublaslt),
      cand("sm90_a", Backend::sm90),          cand("cublaslt", Backend::cublaslt),
      cand("sm90_b", Backend::sm90),          cand("skinny_c", Backend::skinny)};
  std::vector<const bench::CandidateResult*> ranked;  // fastest first
  for (const auto& r : res) ranked.push_back(&r);
  EXPECT_EQ(bench::choose_finalists(ranked, 4, "cublaslt"), (std::vector<size_t>{0, 1, 2, 3, 4, 5, 7}));
  // The top few already hold an sm90 kernel: nothing more of that backend.
  EXPECT_EQ(bench::choose_finalists(ranked, 5, "cublaslt"), (std::vector<size_t>{0, 1, 2, 3, 4, 5, 7}));
  EXPECT_EQ(bench::choose_finalists(ranked, 1, "cublaslt"), (std::vector<size_t>{0, 4, 5, 7}));
  // No final round: only the default is listed, and tune_shape times no round with fewer than two.
  EXPECT_EQ(bench::choose_finalists(ranked, 0, "cublaslt"), (std::vector<size_t>{5}));
  EXPECT_TRUE(bench::choose_finalists({}, 4, "cublaslt").empty());
}

}  // namespace
}  // namespace tgemm
