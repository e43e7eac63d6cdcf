#include "bench/safety.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "bench/problem_bench.h"
#include "bench/timing.h"
#include "core/cuda_status.h"
#include "registry/registry.h"

namespace tgemm::bench {

namespace {

constexpr int64_t kInt32Max = 2147483647;

GuardedCase guarded_case(const Shape& s) { return {s.m, s.n, s.k, s.dtype, s.outdtype, s.bias ? 1 : 0}; }

Shape shape(int64_t m, int64_t n, int64_t k, bool bias = true) { return {m, n, k, bias, DType::bf16, DType::bf16, false, false}; }

std::string num(int64_t v) { return std::to_string(v); }

double tflops(const Shape& s, double us) { return us > 0 ? 2.0 * double(s.m) * double(s.n) * double(s.k) / (us * 1e-6) / 1e12 : 0; }

}  // namespace

std::vector<SweepCase> sweep_cases(const Kernel& k) {
  std::vector<SweepCase> cs;
  const Limits& l = k.limits();
  DType dt = (l.in_dtypes & dtype_bit(DType::bf16)) ? DType::bf16 : DType::fp16;
  auto add = [&](std::string limit, bool inside, Shape s, size_t pieces) {
    s.dtype = dt;
    cs.push_back({&k, std::move(limit), inside, s, pieces});
  };
  const bool small_m = l.max_m != kNoLimit;
  if (l.y_index_bits == 32) {
    // Largest M with (M-1)*N + N-1 <= 2^31-1, for the seed's N.
    const int64_t n = 6144, m_in = (kInt32Max - (n - 1)) / n + 1;
    std::string lim = "int32 Y offset: (M-1)*" + num(n) + "+" + num(n - 1) + " <= 2^31-1 up to M=" + num(m_in);
    add(lim, true, shape(m_in, n, 64), 1);
    add(lim, false, shape(m_in + 1, n, 64), 2);
  }
  if (small_m) {
    std::string lim = "max M = " + num(l.max_m);
    add(lim, true, shape(l.max_m, 4096, 4096), 1);
    add(lim, false, shape(l.max_m + 1, 4096, 4096), 2);
  }
  if (l.y_index_bits >= 64 && !small_m) {
    // M*N around 2^32: no 32-bit offset anywhere may wrap.
    for (int64_t d : {-1, 1}) add("M*N around 2^32 (64-bit Y offsets)", true, shape((int64_t(1) << 20) + d, 4096, 64), 1);
  }
  if (!small_m) {
    // X spanning 4 GiB: M rows of 8 KiB.
    for (int64_t d : {-1, 1}) add("X span around 4 GiB", true, shape((int64_t(1) << 19) + d, 256, 4096), 1);
  }
  // W spanning 4 GiB: N rows of 8 KiB (N a multiple of 8, as TMA kernels need for ldy).
  for (int64_t d : {-8, 8}) add("W span around 4 GiB", true, shape(small_m ? std::min<int64_t>(l.max_m, 16) : 128, (int64_t(1) << 19) + d, 4096), 1);
  return cs;
}

Status run_sweep_case(Dispatcher& d, const SweepCase& c, cudaStream_t stream, SweepResult* out) {
  *out = SweepResult{};
  out->c = c;
  GuardedProblem o;
  if (Status s = make_guarded(guarded_case(c.shape), 4242 + uint64_t(c.shape.m), &o, size_t(1) << 20, size_t(1) << 20, stream); !s.ok()) {
    out->error = s.to_string();
    return Status::Ok();
  }
  GemmArgs a = o.args();
  // cublaslt_hN declines a problem where cuBLASLt's heuristic offers fewer than N+1 algorithms: nothing of it can
  // run there, which is the right outcome, so the case is recorded as declined, not failed.
  if (Verdict v = c.kernel->can_implement(a.p); !v.ok() && v.kind != Verdict::Kind::addressing) {
    out->ok = true;
    out->refused = v.reason;
    out->plan = "declined";
    return Status::Ok();
  }
  Plan plan = d.make_plan(a.p, DeviceInfo::current(), c.kernel->name());
  if (!plan.status.ok()) {
    out->error = "no plan: " + plan.status.message();
    return Status::Ok();
  }
  out->pieces = plan.pieces.size();
  out->plan = plan.kernel->name() + " x" + num(int64_t(plan.pieces.size()));
  if (plan.kernel != c.kernel) out->error = "planned on " + plan.kernel->name() + ", not the kernel under test";
  else if (plan.pieces.size() != c.expect_pieces)
    out->error = "planned " + num(int64_t(plan.pieces.size())) + " pieces, the declared limits predict " + num(int64_t(c.expect_pieces));
  if (Status s = d.run_plan(plan, o.xv, o.wv, o.bias(), o.yv, stream); !s.ok()) {
    out->error = "run: " + s.to_string();
    return Status::Ok();
  }
  if (Status s = cuda_status(cudaStreamSynchronize(stream), "sweep run"); !s.ok()) return s;
  if (Status s = o.guard_bytes(&out->guard_bytes_changed, stream); !s.ok()) return s;
  if (Status s = count_nan_rows(o.yv, &out->unwritten_rows, stream); !s.ok()) return s;
  int64_t boundary = plan.pieces.size() > 1 ? plan.pieces[0].m : 0;
  if (Status s = compare(a, default_tol(c.shape.outdtype), &out->cmp, stream, int64_t(1) << 26, boundary); !s.ok()) return s;
  if (out->error.empty()) {
    if (out->guard_bytes_changed) out->error = num(out->guard_bytes_changed) + " guard bytes changed";
    else if (out->unwritten_rows) out->error = num(out->unwritten_rows) + " rows of Y not written";
    else if (out->cmp.not_close || out->cmp.unwritten) out->error = "result differs from the reference: " + out->cmp.to_string();
  }
  out->ok = out->error.empty();
  return Status::Ok();
}

const Kernel* repro_default_kernel() {
  Problem p;
  p.m = 8192, p.n = 6144, p.k = 1280, p.ldx = 1280, p.ldw = 1280, p.ldy = 6144, p.has_bias = true;
  const Registry& r = Registry::get();
  // The i32 twin (same name up to the suffix) of the heuristic's first sm90 choice.
  for (const Kernel* k : r.defaults(p)) {
    if (k->backend() != Backend::sm90) continue;
    std::string name = k->name();
    if (name.size() > 4 && name.substr(name.size() - 4) == "_i64") name = name.substr(0, name.size() - 4) + "_i32";
    if (const Kernel* t = r.find(name); t && t->limits().y_index_bits == 32) return t;
  }
  for (const Kernel* k : r.all())
    if (k->backend() == Backend::sm90 && k->limits().y_index_bits == 32 && (k->limits().in_dtypes & dtype_bit(DType::bf16))) return k;
  return nullptr;
}

Status run_repro_row(const Kernel& kernel, const std::string& table_path, int64_t m, cudaStream_t stream, ReproRow* out) {
  *out = ReproRow{};
  out->m = m;
  out->kernel = kernel.name();
  const Shape s = shape(m, 6144, 1280);
  out->above = __int128(m) * s.n >= (__int128(1) << 31);
  const size_t before = (size_t(1) << 32) + (size_t(64) << 20);
  // A wrapped int32 offset is in [-2^31, 2^31) elements from Y: 4 GiB of bf16 before it, plus margin.
  GuardedProblem o;
  if (Status st = make_guarded(guarded_case(s), 777 + uint64_t(m), &o, size_t(64) << 20, before, stream); !st.ok()) return st;
  GemmArgs a = o.args();
  DispatcherOptions opts;
  opts.table_paths = {table_path};
  std::unique_ptr<Dispatcher> d;
  if (Status st = Dispatcher::create(opts, &d); !st.ok()) return st;

  // 1. The int32 kernel on the whole problem, limit check bypassed: what the seed's engine did.
  if (Status st = d->run_kernel(kernel, o.xv, o.wv, o.bias(), o.yv, stream, /*bypass_limits=*/true); !st.ok()) return st;
  if (Status s = cuda_status(cudaStreamSynchronize(stream), "bypassed kernel faulted"); !s.ok()) return s;
  int64_t b0 = 0, b1 = 0;
  if (Status st = o.y.check_guards(&b0, &b1, stream); !st.ok()) return st;
  out->bytes_outside = b0 + b1;
  if (Status st = count_nan_rows(o.yv, &out->rows_unwritten, stream); !st.ok()) return st;
  if (Status st = compare(a, 5e-2, &out->bypass_cmp, stream); !st.ok()) return st;

  // 2. The dispatcher on the same problem, after a fresh poison and guard fill.
  if (Status st = o.y.reset_guards(stream); !st.ok()) return st;
  if (Status st = poison(o.yv, stream); !st.ok()) return st;
  const Plan& plan = d->plan(a.p, DeviceInfo::current());
  if (!plan.status.ok()) return plan.status;
  out->plan = plan.kernel->name() + (plan.pieces.size() > 1 ? " split x" + num(int64_t(plan.pieces.size())) : " whole");
  out->pieces = plan.pieces.size();
  if (Status st = d->mm(o.xv, o.wv, o.bias(), o.yv, stream); !st.ok()) return st;
  if (Status st = cuda_status(cudaStreamSynchronize(stream), "planned run"); !st.ok()) return st;
  if (Status st = o.guard_bytes(&out->plan_guard_bytes, stream); !st.ok()) return st;
  if (Status st = count_nan_rows(o.yv, &out->plan_rows_unwritten, stream); !st.ok()) return st;
  if (Status st = compare(a, 5e-2, &out->plan_cmp, stream, int64_t(1) << 26, plan.pieces.size() > 1 ? plan.pieces[0].m : 0); !st.ok())
    return st;

  // 3. Timing, interleaved: cuBLASLt, the dispatcher, and the bypassed kernel where it is safe (below the limit).
  const Kernel* lt = Registry::get().cublaslt();
  std::vector<Launch> launches = {
      [&](int, cudaStream_t st) { return d->run_kernel(*lt, o.xv, o.wv, o.bias(), o.yv, st); },
      [&](int, cudaStream_t st) { return d->mm(o.xv, o.wv, o.bias(), o.yv, st); }};
  if (!out->above) launches.push_back([&](int, cudaStream_t st) { return d->run_kernel(kernel, o.xv, o.wv, o.bias(), o.yv, st, true); });
  std::vector<Timing> t;
  if (Status st = time_interleaved(launches, 1, {3, 10}, stream, &t); !st.ok()) return st;
  out->cublaslt_tflops = tflops(s, t[0].median_us);
  out->plan_tflops = tflops(s, t[1].median_us);
  out->plan_x_cublaslt = t[1].ratio_vs_first > 0 ? 1.0 / t[1].ratio_vs_first : 0;
  if (!out->above) out->bypass_tflops = tflops(s, t[2].median_us);
  return Status::Ok();
}

}  // namespace tgemm::bench
