// Reliability on the host: the dispatcher under threads (the plan cache while tables are reloaded, the untuned
// log from many threads), and hostile problem sizes through planning and splitting. CI also runs these under
// ASan+UBSan and TSan (scripts/test.sh).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <thread>

#include "common/temp_path.h"
#include "common/untabled_dispatcher.h"
#include "dispatch/split.h"
#include "registry/registry.h"
#include "table/table.h"
#include "tgemm/tgemm.h"

namespace tgemm {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

std::unique_ptr<Dispatcher> make_dispatcher(DispatcherOptions o = {}) {
  std::unique_ptr<Dispatcher> d;
  Status s = testing::untabled_dispatcher(&d, o);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return d;
}

Problem seed(int64_t m) {
  Problem p;
  p.m = m, p.n = 6144, p.k = 1280, p.ldx = 1280, p.ldw = 1280, p.ldy = 6144, p.has_bias = true;
  return p;
}

std::string tmp(const std::string& name) { return testing::temp_path("rel_" + name); }

// Serving threads use plans (plan(), resolve(), make_plan(), tables_summary()) while another thread reloads the
// tables again and again. Every reference a serving call handed out must stay readable (ASan), and no access may
// race (TSan). resolve() is mm without the launch: on a machine without a GPU it stops at cudaGetDevice.
TEST(PlanCache, ReloadTablesWhileServing) {
  std::string table = tmp("reload.csv");
  std::ofstream(table) << TunedTable::header() << "\n"
                       << "sm90,132,64,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,cublaslt,0,1,10.0,cublaslt,0,1,1\n"
                       << "sm90,132,8192,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,cublaslt,0,1,20.0,cublaslt,0,1,1\n";
  auto d = make_dispatcher();
  ASSERT_TRUE(d);
  std::vector<Problem> shapes;
  for (int64_t m : {1, 16, 64, 333, 8192, 360000}) shapes.push_back(seed(m));
  // Fake, aligned device addresses: resolve validates them and plans, it never dereferences them.
  auto addr = [](uintptr_t a) { return reinterpret_cast<void*>(a); };
  std::atomic<bool> stop{false};
  std::atomic<int64_t> served{0}, reloads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      size_t i = size_t(t);
      while (!stop.load()) {
        const Problem& p = shapes[i++ % shapes.size()];
        const Plan& pl = d->plan(p, DeviceInfo{});
        // Read through the reference after the call returned: a reload must not have freed it.
        size_t pieces = pl.pieces.size(), steps = pl.chain.size();
        EXPECT_TRUE(pl.status.ok()) << pl.status.to_string();
        EXPECT_GE(pieces, 1u);
        EXPECT_GE(steps, 3u);
        Plan fresh = d->make_plan(p, DeviceInfo{});
        EXPECT_EQ(fresh.status.ok(), pl.status.ok());
        MatrixView x{addr(0x10000000), p.m, p.k, p.ldx, DType::bf16}, w{addr(0x800000000), p.n, p.k, p.ldw, DType::bf16};
        MatrixView y{addr(0x1000000000), p.m, p.n, p.ldy, DType::bf16};
        VectorView b{addr(0x20000000), p.n, DType::bf16};
        Dispatcher::Resolved r;
        Status s = d->resolve(x, w, &b, y, nullptr, &r);
        EXPECT_TRUE(s.ok() || s.code() == StatusCode::cuda_error) << s.to_string();
        if (s.ok() && r.plan) EXPECT_GE(r.plan->pieces.size(), 1u);
        (void)d->tables_summary();
        (void)d->plan_cache_size();
        served.fetch_add(1);
      }
    });
  threads.emplace_back([&] {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < until || reloads.load() < 20) {
      Status s = d->load_tables(reloads.load() % 2 ? std::vector<std::string>{} : std::vector<std::string>{table});
      EXPECT_TRUE(s.ok()) << s.to_string();
      reloads.fetch_add(1);
    }
    stop.store(true);
  });
  for (auto& th : threads) th.join();
  EXPECT_GT(served.load(), 0);
  EXPECT_GE(reloads.load(), 20);
  std::filesystem::remove(table);
}

// Many threads, many shapes, one untuned log: each shape is appended once, the file stays well-formed.
TEST(UntunedLog, ConcurrentThreadsAppendEachShapeOnce) {
  std::string path = tmp("untuned_threads.csv");
  std::filesystem::remove(path);
  DispatcherOptions o;
  o.untuned_log = path;
  {
    auto d = make_dispatcher(o);
    ASSERT_TRUE(d);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&, t] {
        for (int rep = 0; rep < 3; ++rep)
          for (int64_t m = 1; m <= 40; ++m) (void)d->plan(seed(((m + t) % 40) + 1), DeviceInfo{});
      });
    for (auto& th : threads) th.join();
  }
  std::vector<Shape> got;
  Status s = read_shapes(path, &got);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(got.size(), 40u);
  std::set<int64_t> ms;
  for (const Shape& sh : got) ms.insert(sh.m);
  EXPECT_EQ(ms.size(), 40u) << "a shape was appended twice";
  std::filesystem::remove(path);
}

// A kernel with the tightest limits there are: int32 offsets everywhere, TMA, 8-element leading dimensions.
class TinyKernel final : public Kernel {
 public:
  TinyKernel() {
    lim_.y_index_bits = lim_.x_index_bits = lim_.w_index_bits = 32;
    lim_.uses_tma = true;
    lim_.ld_multiple = 8;
    lim_.ptr_align = 16;
    lim_.tile_m = 128, lim_.tile_n = 256;
    lim_.max_m_tiles = 65535, lim_.max_n_tiles = 65535;
  }
  const std::string& name() const override { return name_; }
  Backend backend() const override { return Backend::sm90; }
  const Limits& limits() const override { return lim_; }
  Status run(const GemmArgs&, void*, size_t, cudaStream_t) const override { return Status::Ok(); }

 private:
  std::string name_ = "tiny_i32";
  Limits lim_;
};

// Sizes from 1 to INT64_MAX (which no memory holds, but a Problem can say): split_for answers quickly, never
// overflows (UBSan), never builds a huge piece list, and every piece it returns fits and the pieces tile the problem.
TEST(HostileProblems, SplitStaysBoundedAtExtremes) {
  TinyKernel k;
  const std::vector<int64_t> sizes = {1, 8, 255, 65536, int64_t(1) << 31, (int64_t(1) << 31) + 8, int64_t(1) << 40,
                                      int64_t(1) << 59, kMax - 7, kMax};
  auto t0 = std::chrono::steady_clock::now();
  int split_ok = 0;
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int64_t kk : {int64_t(8), int64_t(1) << 20, kMax - 7}) {
        Problem p;
        p.m = m, p.n = n, p.k = kk;
        // ldy: N rounded up to a multiple of 8, or the largest multiple of 8 where that would pass INT64_MAX.
        p.ldx = p.ldw = kk, p.ldy = n > kMax - 7 ? kMax - 7 : (n + 7) / 8 * 8;
        std::vector<Piece> pieces;
        std::string why;
        bool ok = split_for(k, p, &pieces, &why);
        if (!ok) {
          EXPECT_FALSE(why.empty());
          continue;
        }
        ++split_ok;
        ASSERT_LE(pieces.size(), size_t(1) << 16) << "M=" << m << " N=" << n << " K=" << kk;
        __int128 area = 0;
        for (const Piece& pc : pieces) {
          EXPECT_TRUE(k.can_implement(piece_problem(p, pc.m0, pc.m, pc.n0, pc.n)).ok());
          EXPECT_GE(pc.m0, 0);
          EXPECT_GE(pc.n0, 0);
          EXPECT_LE(__int128(pc.m0) + pc.m, m);
          EXPECT_LE(__int128(pc.n0) + pc.n, n);
          area += __int128(pc.m) * pc.n;
        }
        EXPECT_TRUE(area == __int128(m) * n) << "pieces do not tile M=" << m << " N=" << n;
      }
  EXPECT_GT(split_ok, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
}

// make_plan takes any Problem (explain passes the command line's): negative, zero and INT64_MAX sizes and leading
// dimensions, every dtype, odd alignments. Each gets a plan or a reason, never a crash or UB, within bounded time.
TEST(HostileProblems, MakePlanNeverCrashes) {
  auto d = make_dispatcher();
  ASSERT_TRUE(d);
  const std::vector<int64_t> dims = {kMin, -1, 0, 1, 7, 4096, int64_t(1) << 31, int64_t(1) << 40, kMax};
  auto t0 = std::chrono::steady_clock::now();
  int planned = 0, refused = 0;
  for (int64_t m : dims)
    for (int64_t n : dims)
      for (int64_t k : {int64_t(-1), int64_t(0), int64_t(8), int64_t(1) << 31, kMax})
        for (int variant = 0; variant < 3; ++variant) {
          Problem p;
          p.m = m, p.n = n, p.k = k;
          p.ldx = variant == 1 ? 1 : k, p.ldw = k, p.ldy = variant == 2 ? kMax : n;
          p.in_dtype = variant == 1 ? DType::fp16 : DType::bf16;
          p.out_dtype = variant == 2 ? DType::fp32 : p.in_dtype;
          p.has_bias = variant != 0;
          p.bias_dtype = variant == 2 ? DType::fp32 : p.in_dtype;
          p.align_x = variant == 1 ? 2 : 16;
          Plan pl = d->make_plan(p, DeviceInfo{});
          if (pl.status.ok()) {
            ++planned;
            ASSERT_NE(pl.kernel, nullptr);
            EXPECT_FALSE(pl.pieces.empty());
            EXPECT_LE(pl.pieces.size(), size_t(1) << 16);
          } else {
            ++refused;
            EXPECT_FALSE(pl.status.message().empty());
          }
        }
  std::printf("make_plan over hostile problems: %d planned, %d refused\n", planned, refused);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(120));
}

}  // namespace
}  // namespace tgemm
