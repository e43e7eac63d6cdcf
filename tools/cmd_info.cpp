// tgemm explain, tgemm kernels: what the dispatcher decides and what each kernel can address. No GPU needed.
#include <cstdio>
#include <memory>

#include "cli.h"
#include "tgemm/tgemm.h"

namespace tgemm::cli {

namespace {

std::string bits_str(int b) { return b >= 64 ? "i64" : "i" + std::to_string(b); }

std::string dtypes(uint8_t bits) {
  std::string s;
  for (DType t : {DType::bf16, DType::fp16, DType::fp32})
    if (bits & dtype_bit(t)) s += (s.empty() ? "" : "|") + std::string(dtype_name(t));
  return s;
}

}  // namespace

int cmd_explain(const std::vector<std::string>& argv) {
  Args a(argv, {"--bias", "--eager"}, {"--dtype", "--out", "--bias-dtype", "--kernel", "--ldx", "--ldw", "--ldy", "--arch", "--sms"});
  int64_t m = 0, n = 0, k = 0;
  if (a.ok() && a.positional().size() != 3) a.fail("explain needs M N K");
  if (a.ok() && !parse_int(a.positional()[0], 0, INT64_MAX, &m)) a.fail("M: '" + a.positional()[0] + "' is not a non-negative integer");
  if (a.ok() && !parse_int(a.positional()[1], 0, INT64_MAX, &n)) a.fail("N: '" + a.positional()[1] + "' is not a non-negative integer");
  if (a.ok() && !parse_int(a.positional()[2], 0, INT64_MAX, &k)) a.fail("K: '" + a.positional()[2] + "' is not a non-negative integer");
  DType in = DType::bf16, out = DType::bf16, bias_t = DType::bf16;
  if (a.ok() && a.has("--dtype") && (!parse_dtype(a.str("--dtype"), &in) || in == DType::fp32))
    a.fail("--dtype: '" + a.str("--dtype") + "' is not bf16 or fp16");
  bias_t = in;
  if (a.ok() && a.has("--out") && !parse_dtype(a.str("--out"), &out)) a.fail("--out: '" + a.str("--out") + "' is not bf16, fp16 or fp32");
  if (a.ok() && a.has("--bias-dtype") && (!parse_dtype(a.str("--bias-dtype"), &bias_t) || (bias_t != in && bias_t != DType::fp32)))
    a.fail("--bias-dtype: '" + a.str("--bias-dtype") + "' must be the input dtype or fp32");
  Problem p;
  p.m = m, p.n = n, p.k = k;
  p.in_dtype = in, p.out_dtype = out;
  p.has_bias = a.flag("--bias") || a.has("--bias-dtype");
  p.bias_dtype = bias_t;
  p.ldx = a.int_opt("--ldx", std::max<int64_t>(k, 1), std::max<int64_t>(k, 1), INT64_MAX);
  p.ldw = a.int_opt("--ldw", std::max<int64_t>(k, 1), std::max<int64_t>(k, 1), INT64_MAX);
  p.ldy = a.int_opt("--ldy", std::max<int64_t>(n, 1), std::max<int64_t>(n, 1), INT64_MAX);
  DeviceInfo dev = DeviceInfo::current();
  if (a.has("--arch")) dev.arch = a.str("--arch");
  dev.sm_count = int(a.int_opt("--sms", dev.sm_count, 1, 100000));
  if (!a.ok()) {
    std::fprintf(stderr, "tgemm explain: %s\n", a.error().c_str());
    return 2;
  }
  Dispatcher& d = Dispatcher::global();
  if (Status ts = d.table_status(); !ts.ok()) {  // what every mm of this process would return
    std::fprintf(stderr, "tgemm explain: %s\n", ts.to_string().c_str());
    return 1;
  }
  std::printf("%s\n", d.tables_summary().c_str());
  if (m == 0 || n == 0) {
    std::printf("  M or N is 0: mm is a no-op\n");
    return 0;
  }
  if (k == 0) {
    std::printf("  K = 0: Y = bias broadcast over rows (or zeros), no kernel\n");
    return 0;
  }
  Plan plan = d.make_plan(p, dev, a.str("--kernel"), a.flag("--eager") ? LaunchMode::eager : LaunchMode::graph);
  std::fputs(plan.to_string().c_str(), stdout);
  if (!plan.status.ok()) {
    std::fprintf(stderr, "tgemm explain: %s\n", plan.status.to_string().c_str());
    return 1;
  }
  if (plan.pieces.size() > 1) {
    std::printf("  pieces (rows m0..m0+m, cols n0..n0+n):\n");
    size_t shown = 0;
    for (const Piece& pc : plan.pieces) {
      if (shown++ == 8) {
        std::printf("    ... %zu more\n", plan.pieces.size() - 8);
        break;
      }
      std::printf("    rows [%lld, %lld) cols [%lld, %lld)\n", (long long)pc.m0, (long long)(pc.m0 + pc.m), (long long)pc.n0,
                  (long long)(pc.n0 + pc.n));
    }
  }
  return 0;
}

int cmd_kernels(const std::vector<std::string>& argv) {
  Args a(argv, {}, {});
  if (!a.ok() || !a.positional().empty()) {
    std::fprintf(stderr, "tgemm kernels: %s\n", a.ok() ? "takes no arguments" : a.error().c_str());
    return 2;
  }
  std::printf("%-36s %-9s %-4s %-4s %-4s %-3s %-5s %-5s %-7s %-9s %-14s %s\n", "kernel", "backend", "Y", "X", "W", "TMA",
              "ld%", "align", "M", "in", "out", "deterministic");
  for (const Kernel* k : kernels()) {
    const Limits& l = k->limits();
    std::string mr = std::to_string(l.min_m) + ".." + (l.max_m == kNoLimit ? std::string("") : std::to_string(l.max_m));
    std::printf("%-36s %-9s %-4s %-4s %-4s %-3s %-5d %-5d %-7s %-9s %-14s %s\n", k->name().c_str(),
                std::string(backend_name(k->backend())).c_str(), bits_str(l.y_index_bits).c_str(), bits_str(l.x_index_bits).c_str(),
                bits_str(l.w_index_bits).c_str(), l.uses_tma ? "yes" : "no", l.ld_multiple, l.ptr_align, mr.c_str(),
                dtypes(l.in_dtypes).c_str(), dtypes(l.out_dtypes).c_str(), k->deterministic() ? "yes" : "no");
  }
  std::printf("\nY/X/W: width of the element offsets the kernel computes into each operand (i32: every offset <= 2^31-1).\n"
              "TMA: loads through tensor maps (coordinates < 2^31, strides < 2^40 bytes, multiples of 16 bytes).\n");
  return 0;
}

}  // namespace tgemm::cli
