// What `mm` does: validate, look up the plan (cached per shape), check limits, split, launch.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "backends/reference/reference.h"
#include "core/cuda_status.h"
#include "core/env.h"
#include "dispatch/embedded_tables.h"
#include "dispatch/split.h"
#include "registry/registry.h"
#include "table/table.h"
#include "tgemm/tgemm.h"

namespace tgemm {

namespace {

struct PlanKey {
  Problem p;
  std::string arch;
  int sms;
  LaunchMode mode;
  bool operator==(const PlanKey&) const = default;
};

struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const {
    const Problem& p = k.p;
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    mix(uint64_t(p.m)); mix(uint64_t(p.n)); mix(uint64_t(p.k));
    mix(uint64_t(p.ldx)); mix(uint64_t(p.ldw)); mix(uint64_t(p.ldy));
    mix(uint64_t(p.in_dtype) | uint64_t(p.out_dtype) << 8 | uint64_t(p.bias_dtype) << 16 | uint64_t(p.has_bias) << 24);
    mix(uint64_t(p.align_x) | uint64_t(p.align_w) << 8 | uint64_t(p.align_y) << 16 | uint64_t(p.align_bias) << 24);
    mix(uint64_t(k.sms) | uint64_t(k.mode) << 32);
    return size_t(h ^ std::hash<std::string>()(k.arch));
  }
};

// TGEMM_ZEROED_COUNTERS=0: kernels get no zeroed counters and zero their own before each split launch (A/B timing).
bool zeroed_counters_enabled() {
  static const bool on = env_switch("TGEMM_ZEROED_COUNTERS");
  return on;
}

// The stream workspaces of one dispatcher, keyed by device and stream. cudaStreamPerThread names a different stream
// in every host thread, so there the thread is part of the key (one workspace shared by two threads' streams would be
// written by both at once). Shared with the threads that got such a per-thread workspace, so that each frees its own
// when it exits (ThreadWorkspaces); a pool whose dispatcher is gone goes with its last reference.
struct WorkspacePool {
  struct Workspace {
    void* ptr = nullptr;
    size_t bytes = 0;
    ZeroedCounters counters;  // kept apart from ptr: cuBLASLt writes anywhere in ptr
    // Forget the buffer (freed or never allocated); the counters stay: every kernel leaves them zero.
    void drop_buffer() {
      ptr = nullptr;
      bytes = 0;
    }
  };
  using Key = std::tuple<int, cudaStream_t, std::thread::id>;
  static Key key(int dev, cudaStream_t stream) {
    return {dev, stream, stream == cudaStreamPerThread ? std::this_thread::get_id() : std::thread::id()};
  }
  // A key with a thread names a per-thread workspace: the one decision `key` makes.
  static bool per_thread(const Key& k) { return std::get<2>(k) != std::thread::id(); }
  std::mutex mu;
  std::map<Key, Workspace> workspaces;

  static void release(Workspace& w) {
    // cudaFree waits for the device to finish with the memory, so work still queued on the stream is safe.
    if (w.ptr) cudaFree(w.ptr);
    if (w.counters.ptr) cudaFree(w.counters.ptr);
    w = {};
  }
  void release_thread(std::thread::id t) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = workspaces.begin(); it != workspaces.end();) {
      if (std::get<2>(it->first) == t) {  // t is a real thread, so only per-thread keys match
        release(it->second);
        it = workspaces.erase(it);
      } else {
        ++it;
      }
    }
  }
  size_t bytes() {
    std::lock_guard<std::mutex> lock(mu);
    size_t b = 0;
    for (auto& [k, w] : workspaces) b += w.bytes + (w.counters.ptr ? size_t(w.counters.count) * sizeof(uint32_t) : 0);
    return b;
  }
  ~WorkspacePool() {
    for (auto& [k, w] : workspaces) release(w);
  }
};

// Per host thread: the pools that gave this thread a per-thread workspace. At the thread's exit each pool still alive
// frees it, so a thread pool's churn does not pile up workspaces (34 MiB each) in a long-lived dispatcher.
class ThreadWorkspaces {
 public:
  void add(const std::shared_ptr<WorkspacePool>& pool) {
    std::erase_if(pools_, [](const std::weak_ptr<WorkspacePool>& w) { return w.expired(); });
    for (const auto& w : pools_)
      if (w.lock() == pool) return;
    pools_.push_back(pool);
  }
  ~ThreadWorkspaces() {
    for (const auto& w : pools_)
      if (auto pool = w.lock()) pool->release_thread(std::this_thread::get_id());
  }

 private:
  std::vector<std::weak_ptr<WorkspacePool>> pools_;
};
thread_local ThreadWorkspaces t_workspaces;

// Strings are built without iostreams throughout the library: a host process (PyTorch seen on the H200) can
// install a global locale from another libstdc++ copy, and any ostream then crashes inside ours.
std::string describe(const Problem& p) {
  auto n = [](int64_t v) { return std::to_string(v); };
  std::string s = "M=" + n(p.m) + " N=" + n(p.n) + " K=" + n(p.k) + " " + std::string(dtype_name(p.in_dtype)) + " -> " +
                  std::string(dtype_name(p.out_dtype));
  s += p.has_bias ? ", bias " + std::string(dtype_name(p.bias_dtype)) : std::string(", no bias");
  s += ", ldx=" + n(p.ldx) + " ldw=" + n(p.ldw) + " ldy=" + n(p.ldy);
  __int128 mn = __int128(p.m) * p.n;
  s += "; M*N = " + (mn > INT64_MAX ? std::string("> 2^63") : n(int64_t(mn))) + (mn >= (__int128(1) << 31) ? " >= 2^31" : " < 2^31");
  return s;
}

// Whether work queued on `stream` now is recorded into a graph. An error (the legacy stream while another stream of
// the device captures in global mode) counts as a capture: the graph tables are the default, and such a launch
// would fail anyway.
bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &st) != cudaSuccess) {
    cudaGetLastError();  // ours, not the caller's: the failed query just replaced any earlier one
    return true;
  }
  return st != cudaStreamCaptureStatusNone;
}

std::vector<std::string> split_paths(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(':', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

DeviceInfo DeviceInfo::current() {
  DeviceInfo d;
  int dev = 0, major = 0, minor = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    cudaGetLastError();  // no device: keep the default (sm90, 132 SMs) so planning works on a CPU machine
    return d;
  }
  d.arch = "sm" + std::to_string(major) + std::to_string(minor);
  d.sm_count = sms;
  return d;
}

std::string Plan::to_string() const {
  std::string s;
  for (const std::string& c : chain) s += "  " + c + "\n";
  return s;
}

struct Dispatcher::Impl {
  DispatcherOptions opts;
  Status table_status;  // a failed table load is reported by every mm, never silently ignored
  std::atomic<bool> tables_failed{false};  // table_status is not ok; read without the lock by every mm
  TunedTable table;
  TunedTable eager_table;  // from the "_eager.csv" files: rows timed with plain launches
  std::vector<std::string> table_files;
  LoadStats table_stats;

  mutable std::shared_mutex plans_mu;
  std::unordered_map<PlanKey, std::unique_ptr<Plan>, PlanKeyHash> plans;
  // Plans of earlier tables: load_tables retires them instead of freeing them, so a Plan& or Resolved::plan that a
  // concurrent mm / resolve / plan() holds stays valid for the dispatcher's lifetime.
  std::vector<std::unique_ptr<Plan>> retired_plans;

  // Arrival counters per stream: a split's counters are per output tile, and no split launch of the suites has more
  // than a few thousand tiles; a launch with more zeroes counters in its workspace instead.
  static constexpr int64_t kZeroedCounters = 65536;
  const std::shared_ptr<WorkspacePool> pool = std::make_shared<WorkspacePool>();

  std::mutex dev_mu;
  std::vector<std::unique_ptr<DeviceInfo>> devices;  // by ordinal, filled once

  std::mutex log_mu;
  std::set<std::string> logged_shapes;
  bool log_file_read = false;

  const DeviceInfo& device(int ordinal) {
    std::lock_guard<std::mutex> lock(dev_mu);
    if (size_t(ordinal) >= devices.size()) devices.resize(ordinal + 1);
    if (!devices[ordinal]) devices[ordinal] = std::make_unique<DeviceInfo>(DeviceInfo::current());
    return *devices[ordinal];
  }

  Status workspace(int dev, cudaStream_t stream, size_t bytes, void** out, ZeroedCounters* counters) {
    *out = nullptr;
    *counters = {};
    if (bytes == 0) return Status::Ok();
    std::lock_guard<std::mutex> lock(pool->mu);
    const WorkspacePool::Key key = WorkspacePool::key(dev, stream);
    WorkspacePool::Workspace& w = pool->workspaces[key];
    if (WorkspacePool::per_thread(key) && w.bytes == 0) t_workspaces.add(pool);
    if (w.bytes < bytes) {
      cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(stream, &capturing) != cudaSuccess) capturing = cudaStreamCaptureStatusActive;
      if (w.ptr) {
        // Growth happens on the first call of a larger shape on a stream (warm-up), never afterwards; it needs a
        // synchronisation, which a graph capture cannot hold.
        if (capturing != cudaStreamCaptureStatusNone)
          return {StatusCode::invalid_argument, "the stream's workspace must grow from " + std::to_string(w.bytes) + " to " +
                                                    std::to_string(bytes) + " bytes during CUDA-graph capture: run this shape once on the stream before capturing"};
        cudaStreamSynchronize(stream);
        cudaFree(w.ptr);
        w.drop_buffer();
      }
      // One size serves every cuBLASLt problem (its 32 MiB plus a widened bias), so a stream's workspace is
      // allocated once.
      size_t want = std::max<size_t>(bytes, size_t(34) << 20);
      // cudaMalloc is legal inside a capture only in relaxed mode: switch this thread for the call, as PyTorch does.
      cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
      cudaThreadExchangeStreamCaptureMode(&mode);
      cudaError_t e = cudaMalloc(&w.ptr, want);
      cudaThreadExchangeStreamCaptureMode(&mode);
      if (e != cudaSuccess) {
        w.drop_buffer();
        return cuda_status(e, "workspace cudaMalloc");
      }
      w.bytes = want;
      // The zeroed counters come with the workspace (so nothing is allocated after a shape's first call), zeroed
      // once by a memset on this stream ahead of every kernel that uses them. Not while the stream is captured: the
      // memset would only be recorded into the graph, and a later eager call would find the counters never zeroed.
      // A stream whose workspace was allocated inside a capture gets them when the workspace next grows outside
      // one; until then its split launches zero counters in the workspace.
      // Under TGEMM_ZEROED_COUNTERS=0 none are allocated.
      if (zeroed_counters_enabled() && !w.counters.ptr && capturing == cudaStreamCaptureStatusNone) {
        void* c = nullptr;
        const size_t cbytes = size_t(kZeroedCounters) * sizeof(uint32_t);
        cudaError_t ce = cudaMalloc(&c, cbytes);
        if (ce == cudaSuccess) {
          ce = cudaMemsetAsync(c, 0, cbytes, stream);
          if (ce == cudaSuccess) w.counters = {static_cast<uint32_t*>(c), kZeroedCounters};
          else cudaFree(c);
        }
        // A failure only means no zeroed counters (the kernels fall back to a memset). Clear the error it left, and
        // only then: on success the thread's last error may be the caller's own, which is not ours to swallow.
        if (ce != cudaSuccess) cudaGetLastError();
      }
    }
    *out = w.ptr;
    *counters = w.counters;
    return Status::Ok();
  }

  void log_shape(const Problem& p) {
    if (opts.untuned_log.empty()) return;
    Shape s{p.m, p.n, p.k, p.has_bias, p.in_dtype, p.out_dtype, false, false};
    std::string line = format_shape(s);
    std::lock_guard<std::mutex> lock(log_mu);
    if (!log_file_read) {
      // Shapes already in the file are not appended again.
      log_file_read = true;
      std::vector<Shape> existing;
      if (read_shapes(opts.untuned_log, &existing).ok())
        for (const Shape& e : existing) logged_shapes.insert(format_shape(e));
    }
    if (!logged_shapes.insert(line).second) return;
    bool fresh = !std::filesystem::exists(opts.untuned_log) || std::filesystem::file_size(opts.untuned_log) == 0;
    FILE* f = std::fopen(opts.untuned_log.c_str(), "a");
    if (!f) {
      std::fprintf(stderr, "[tgemm] cannot append to TGEMM_UNTUNED_LOG=%s\n", opts.untuned_log.c_str());
      return;
    }
    if (fresh) std::fprintf(f, "%s\n", shapes_header());
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
};

Dispatcher::Dispatcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

// The workspaces go with the pool: now, or when the last host thread still holding it lets go.
Dispatcher::~Dispatcher() = default;

size_t Dispatcher::workspace_bytes() const { return impl_->pool->bytes(); }

Status Dispatcher::create(const DispatcherOptions& opts, std::unique_ptr<Dispatcher>* out) {
  auto impl = std::make_unique<Impl>();
  impl->opts = opts;
  auto d = std::unique_ptr<Dispatcher>(new Dispatcher(std::move(impl)));
  if (Status s = d->load_tables(opts.table_paths); !s.ok()) return s;
  *out = std::move(d);
  return Status::Ok();
}

Dispatcher& Dispatcher::global() {
  // Never destroyed: CUDA's runtime may be torn down before static destructors run.
  static Dispatcher* g = [] {
    DispatcherOptions o;
    if (const char* c = std::getenv("TGEMM_CONFIG"); c && *c) o.table_paths = split_paths(c);
    if (const char* u = std::getenv("TGEMM_UNTUNED_LOG"); u && *u) o.untuned_log = u;
    if (const char* l = std::getenv("TGEMM_LOG"); l && *l && std::string(l) != "0") o.log_plans = true;
    auto impl = std::make_unique<Impl>();
    impl->opts = o;
    auto* d = new Dispatcher(std::move(impl));
    d->impl_->table_status = d->load_tables(o.table_paths);
    d->impl_->tables_failed.store(!d->impl_->table_status.ok());
    if (!d->impl_->table_status.ok())
      std::fprintf(stderr, "[tgemm] %s\n", d->impl_->table_status.to_string().c_str());
    return d;
  }();
  return *g;
}

Status Dispatcher::load_tables(const std::vector<std::string>& paths) {
  TunedTable table, eager_table;
  LoadStats stats;
  std::vector<std::string> files;
  const Registry& reg = Registry::get();
  auto known = [&](const std::string& name, const std::string& libtype) {
    const Kernel* k = reg.find(name);
    return k && backend_name(k->backend()) == libtype;
  };
  Status s;
  if (!paths.empty()) {
    for (const std::string& p : paths) {
      if (!(s = (is_eager_table(p) ? eager_table : table).load(p, known, &stats)).ok()) break;
      files.push_back(p);
    }
  } else if (impl_->opts.load_default_tables) {
    for (const EmbeddedTable& t : embedded_tables()) {
      TunedTable& into = is_eager_table(t.name) ? eager_table : table;
      if (!(s = into.load_text(t.text, std::string("<embedded>/") + t.name, known, &stats)).ok()) break;
      files.push_back(std::string("<embedded>/") + t.name);
    }
  }
  if (!s.ok()) return s;
  {
    std::unique_lock<std::shared_mutex> lock(impl_->plans_mu);
    impl_->table = std::move(table);
    impl_->eager_table = std::move(eager_table);
    impl_->table_stats = stats;
    impl_->table_files = files;
    impl_->table_status = Status::Ok();
    impl_->tables_failed.store(false);
    for (auto& [key, plan] : impl_->plans) impl_->retired_plans.push_back(std::move(plan));
    impl_->plans.clear();
  }
  for (const std::string& n : stats.notes) std::fprintf(stderr, "[tgemm] merge: %s\n", n.c_str());
  return Status::Ok();
}

std::string Dispatcher::tables_summary() const {
  std::shared_lock<std::shared_mutex> lock(impl_->plans_mu);
  std::string s = "tables: ";
  if (impl_->table_files.empty()) s += "(none)";
  for (size_t i = 0; i < impl_->table_files.size(); ++i) s += (i ? ", " : "") + impl_->table_files[i];
  s += "; " + std::to_string(impl_->table.size()) + " rows";
  if (impl_->eager_table.size()) s += " (+" + std::to_string(impl_->eager_table.size()) + " for eager launches)";
  if (impl_->table_stats.other_arch) s += ", " + std::to_string(impl_->table_stats.other_arch) + " rows for other archs skipped";
  if (!impl_->table_stats.notes.empty()) s += ", " + std::to_string(impl_->table_stats.notes.size()) + " duplicate keys merged";
  return s;
}

Status Dispatcher::table_status() const {
  std::shared_lock<std::shared_mutex> lock(impl_->plans_mu);
  return impl_->table_status;
}

size_t Dispatcher::plan_cache_size() const {
  std::shared_lock<std::shared_mutex> lock(impl_->plans_mu);
  return impl_->plans.size();
}

Plan Dispatcher::make_plan(const Problem& p, const DeviceInfo& dev, const std::string& forced, LaunchMode mode) const {
  Plan plan;
  plan.problem = p;
  plan.mode = mode;
  plan.chain.push_back("problem: " + describe(p));
  plan.chain.push_back("device: " + dev.arch + ", " + std::to_string(dev.sm_count) + " SMs" +
                       (mode == LaunchMode::eager ? "; eager launches (no graph capture)" : ""));
  const Registry& reg = Registry::get();
  struct Cand {
    const Kernel* k;
    std::string source;
  };
  std::vector<Cand> cands;
  auto add = [&](const Kernel* k, const std::string& src) {
    for (const Cand& c : cands)
      if (c.k == k) return;
    cands.push_back({k, src});
  };
  if (!forced.empty()) {
    const Kernel* k = reg.find(forced);
    if (!k) {
      plan.status = {StatusCode::invalid_argument, "unknown kernel '" + forced + "' (see `tgemm kernels`)"};
      plan.chain.push_back("forced kernel: " + plan.status.message());
      return plan;
    }
    add(k, "forced");
  }
  {
    Shape s{p.m, p.n, p.k, p.has_bias, p.in_dtype, p.out_dtype, false, false};
    std::shared_lock<std::shared_mutex> lock(impl_->plans_mu);
    // A table row's kernel becomes the next candidate (`what`: "table" or "eager table").
    auto take_row = [&](const TableRow* row, const std::string& how, const std::string& what) {
      char us[32];
      std::snprintf(us, sizeof us, "%.2f", row->us);
      const std::string at = row->file + ":" + std::to_string(row->line);
      plan.chain.push_back(what + ": " + how + " -> " + at + " (tuned at M=" + std::to_string(row->shape.m) + ", " + us +
                           " us): " + row->kernel_name);
      const Kernel* k = reg.find(row->kernel_name);
      if (!k) return;
      if (k->tuned_shape_only() && row->shape.m < s.m)
        plan.chain.push_back("  " + k->name() + " was only checked at the tuned M=" + std::to_string(row->shape.m) +
                             "; a configured vendor algorithm is not run at a larger M (" + std::to_string(s.m) +
                             ") -> " + (what == "table" ? "heuristic candidates" : "the graph table"));
      else
        add(k, what + " " + at);
    };
    std::string how, ehow;
    int closeness = 3, eager_closeness = 3;
    const TableRow* row = impl_->table.lookup(dev.arch, dev.sm_count, s, &how, &closeness);
    const TableRow* erow = impl_->eager_table.size()
                               ? impl_->eager_table.lookup(dev.arch, dev.sm_count, s, &ehow, &eager_closeness)
                               : nullptr;
    // An eager row comes first only where it is as close to the problem as the graph table's: a row tuned at this M
    // with plain launches says nothing about another M that the graph table has measured (run 423: padded eager rows
    // at M = 16 took over 1 x 28672 x 4096 and 1 x 3584 x 3584 from their exact graph rows).
    if (erow && eager_closeness > closeness) {
      if (mode == LaunchMode::eager)
        plan.chain.push_back("eager table: " + ehow + " (M=" + std::to_string(erow->shape.m) +
                             "); the table's row is closer to this M and serves eager launches too");
      erow = nullptr;
    }
    if (mode == LaunchMode::eager) {
      if (erow) take_row(erow, ehow, "eager table");
      else if (impl_->eager_table.size() && eager_closeness == 3) plan.chain.push_back("eager table: " + ehow);
    }
    if (row) take_row(row, how, "table");
    else plan.chain.push_back("table: " + how + " (" + std::to_string(impl_->table.size()) + " rows for " + dev.arch + ")");
    if (mode == LaunchMode::graph && erow && (!row || row->kernel_name != erow->kernel_name)) {
      plan.eager_differs = true;
      plan.chain.push_back("eager launches: " + erow->file + ":" + std::to_string(erow->line) + " names " +
                           erow->kernel_name + " (tgemm explain --eager); this plan serves graph capture");
    }
  }
  std::vector<const Kernel*> defaults = reg.defaults(p);
  std::string dnames;
  for (const Kernel* k : defaults) {
    dnames += (dnames.empty() ? "" : ", ") + k->name();
    add(k, k->backend() == Backend::cublaslt ? "vendor" : "heuristic");
  }
  plan.chain.push_back("heuristic candidates: " + (dnames.empty() ? std::string("(none)") : dnames));
  std::string fnames;
  for (const Kernel* k : reg.fallbacks(p)) {
    fnames += (fnames.empty() ? "" : ", ") + k->name();
    add(k, "fallback");
  }
  if (!fnames.empty()) plan.chain.push_back("fallbacks (after cuBLASLt): " + fnames);

  std::string reasons;
  for (const Cand& c : cands) {
    Verdict v = c.k->can_implement(p);
    std::string head = "candidate " + c.k->name() + " (" + c.source + "): ";
    if (v.ok()) {
      plan.chain.push_back(head + "limits ok");
      plan.kernel = c.k;
      plan.pieces = {{0, p.m, 0, p.n}};
      plan.source = c.source;
      break;
    }
    if (v.kind == Verdict::Kind::addressing) {
      plan.chain.push_back(head + "addressing limit: " + v.reason);
      std::vector<Piece> pieces;
      std::string why;
      if (split_for(*c.k, p, &pieces, &why)) {
        int64_t max_rows = 0, max_cols = 0;
        for (const Piece& pc : pieces) max_rows = std::max(max_rows, pc.m), max_cols = std::max(max_cols, pc.n);
        plan.chain.push_back("split: " + std::to_string(pieces.size()) + " pieces of <= " + std::to_string(max_rows) +
                             " rows x " + std::to_string(max_cols) + " cols, each within " + c.k->name() + "'s limits");
        plan.kernel = c.k;
        plan.pieces = std::move(pieces);
        plan.source = c.source + ", split";
        break;
      }
      plan.chain.push_back("  cannot split: " + why + " -> next candidate");
      reasons += "; " + c.k->name() + ": " + v.reason + " (cannot split: " + why + ")";
    } else {
      plan.chain.push_back(head + v.reason + " -> next candidate");
      reasons += "; " + c.k->name() + ": " + v.reason;
    }
  }
  if (!plan.kernel) {
    plan.status = {StatusCode::not_supported, "no kernel can run " + describe(p) + reasons};
    plan.chain.push_back("plan: none (" + plan.status.message() + ")");
    return plan;
  }
  for (const Piece& pc : plan.pieces)
    plan.workspace_bytes = std::max(plan.workspace_bytes, plan.kernel->workspace_bytes(piece_problem(p, pc.m0, pc.m, pc.n0, pc.n)));
  plan.chain.push_back("plan: " + plan.kernel->name() + ", " + std::to_string(plan.pieces.size()) +
                       (plan.pieces.size() == 1 ? " piece" : " pieces") + ", workspace " + std::to_string(plan.workspace_bytes) + " bytes");
  const Piece& first = plan.pieces.front();
  if (std::string run = plan.kernel->describe_run(piece_problem(p, first.m0, first.m, first.n0, first.n)); !run.empty())
    plan.chain.push_back("  run" + std::string(plan.pieces.size() > 1 ? " (first piece)" : "") + ": " + run);
  return plan;
}

const Plan& Dispatcher::plan(const Problem& p, const DeviceInfo& dev, LaunchMode mode) {
  PlanKey key{p, dev.arch, dev.sm_count, mode};
  {
    std::shared_lock<std::shared_mutex> lock(impl_->plans_mu);
    auto it = impl_->plans.find(key);
    if (it != impl_->plans.end()) return *it->second;
  }
  auto fresh = std::make_unique<Plan>(make_plan(p, dev, "", mode));
  const Plan* result;
  bool inserted;
  {
    std::unique_lock<std::shared_mutex> lock(impl_->plans_mu);
    auto [it, ins] = impl_->plans.emplace(key, std::move(fresh));
    result = it->second.get();
    inserted = ins;
  }
  if (inserted) {
    impl_->log_shape(p);
    if (impl_->opts.log_plans) {
      std::fprintf(stderr, "[tgemm] new %splan for %s\n%s", mode == LaunchMode::eager ? "eager " : "", describe(p).c_str(),
                   result->to_string().c_str());
    }
  }
  return *result;
}

Status Dispatcher::resolve(const MatrixView& x, const MatrixView& w, const VectorView* bias, const MatrixView& y,
                           cudaStream_t stream, Resolved* out) {
  *out = Resolved{};
  if (impl_->tables_failed.load()) {
    std::shared_lock<std::shared_mutex> lock(impl_->plans_mu);
    if (!impl_->table_status.ok()) return impl_->table_status;
  }
  if (Status s = make_problem(x, w, bias, y, &out->args.p); !s.ok()) return s;
  const Problem& p = out->args.p;
  out->args.x = x.data, out->args.w = w.data, out->args.bias = bias ? bias->data : nullptr, out->args.y = y.data;
  if (p.m == 0 || p.n == 0 || p.k == 0) return Status::Ok();
  if (cudaError_t e = cudaGetDevice(&out->device); e != cudaSuccess) return cuda_status(e, "cudaGetDevice");
  const DeviceInfo& dev = impl_->device(out->device);
  const Plan* pl = &plan(p, dev);
  size_t ws_bytes = pl->workspace_bytes;
  // The capture query costs a runtime call, so only shapes whose eager row differs pay it. The eager launch sizes the
  // workspace for both plans: a capture after eager warm-up must not need it to grow.
  if (pl->eager_differs && !capturing(stream)) {
    pl = &plan(p, dev, LaunchMode::eager);
    ws_bytes = std::max(ws_bytes, pl->workspace_bytes);
  }
  if (!pl->status.ok()) return pl->status;
  out->plan = pl;
  return impl_->workspace(out->device, stream, ws_bytes, &out->workspace, &out->args.counters);
}

Status Dispatcher::mm(const MatrixView& x, const MatrixView& w, const VectorView* bias, const MatrixView& y,
                      cudaStream_t stream) {
  Resolved r;
  if (Status s = resolve(x, w, bias, y, stream, &r); !s.ok()) return s;
  const Problem& p = r.args.p;
  if (p.m == 0 || p.n == 0) return Status::Ok();
  if (p.k == 0) return reference::fill_bias(r.args, stream);  // Y = bias (or 0): no product to compute
  return launch(*r.plan, r.args, r.workspace, stream);
}

Status Dispatcher::run_plan(const Plan& pl, const MatrixView& x, const MatrixView& w, const VectorView* bias,
                            const MatrixView& y, cudaStream_t stream) {
  Problem p;
  if (Status s = make_problem(x, w, bias, y, &p); !s.ok()) return s;
  if (!(p == pl.problem)) return {StatusCode::invalid_argument, "run_plan: the operands do not match the plan's problem"};
  if (p.m == 0 || p.n == 0) return Status::Ok();
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return cuda_status(e, "cudaGetDevice");
  return execute(pl, {p, x.data, w.data, bias ? bias->data : nullptr, y.data, {}}, dev, stream);
}

Status Dispatcher::execute(const Plan& pl, const GemmArgs& a, int dev, cudaStream_t stream) {
  if (!pl.status.ok()) return pl.status;
  void* ws = nullptr;
  GemmArgs args = a;
  if (Status s = impl_->workspace(dev, stream, pl.workspace_bytes, &ws, &args.counters); !s.ok()) return s;
  return launch(pl, args, ws, stream);
}

Status Dispatcher::launch(const Plan& pl, const GemmArgs& a, void* ws, cudaStream_t stream) {
  const Problem& p = a.p;
  if (pl.pieces.size() == 1 && pl.pieces[0].m == p.m && pl.pieces[0].n == p.n) return pl.kernel->run(a, ws, pl.workspace_bytes, stream);
  for (const Piece& pc : pl.pieces)
    if (Status s = pl.kernel->run(piece_args(a, pc), ws, pl.workspace_bytes, stream); !s.ok()) return s;
  return Status::Ok();
}

Status Dispatcher::run_kernel(const Kernel& kernel, const MatrixView& x, const MatrixView& w, const VectorView* bias,
                              const MatrixView& y, cudaStream_t stream, bool bypass_limits) {
  Problem p;
  if (Status s = make_problem(x, w, bias, y, &p); !s.ok()) return s;
  if (p.m == 0 || p.n == 0) return Status::Ok();
  if (!bypass_limits) {
    Verdict v = kernel.can_implement(p);
    if (!v.ok()) return {StatusCode::not_supported, kernel.name() + " cannot run " + describe(p) + ": " + v.reason};
  }
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return cuda_status(e, "cudaGetDevice");
  size_t bytes = kernel.workspace_bytes(p);
  void* ws = nullptr;
  GemmArgs args{p, x.data, w.data, bias ? bias->data : nullptr, y.data, {}};
  if (Status s = impl_->workspace(dev, stream, bytes, &ws, &args.counters); !s.ok()) return s;
  return kernel.run(args, ws, bytes, stream);
}

}  // namespace tgemm
