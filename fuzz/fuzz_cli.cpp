// Fuzz target: the `tgemm` command's hand-written argument parser (tools/cli.cpp: Args, parse_int).
//
// Input: one argument per line ('\n'); the first selects the command, whose flag and option sets (copied from
// tools/cmd_*.cpp) the rest is parsed with; then every accessor the commands use is called with their ranges.
// Properties beyond "no crash, no sanitizer report":
//  - parse_int accepts exactly [+-]?[0-9]{1,20} strings whose value lies in [lo, hi], and returns that value;
//  - int_opt / double_opt return a value in range or the default with error() set;
//  - an Args that is ok() has no positional that looks like an option, and each option's value is one argument.
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cli.h"
#include "fuzz_check.h"

namespace {

using tgemm::cli::Args;
using tgemm::cli::parse_int;

struct Command {
  const char* name;
  std::set<std::string> flags, options;
};

const std::vector<Command>& commands() {
  static const std::vector<Command> c = {
      {"explain", {"--bias"}, {"--dtype", "--out", "--bias-dtype", "--kernel", "--ldx", "--ldw", "--ldy", "--arch", "--sms"}},
      {"kernels", {}, {}},
      {"bench", {"--no-check", "--no-ceilings"}, {"-i", "--warmup", "--iters", "--csv", "--kernel"}},
      {"tune",
       {"--update-improved", "--retune", "--help"},
       {"-i", "-o", "--libtype", "--warmup", "--iters", "--err-ratio", "--min-improvement-pct", "--profile-file", "--gpus",
        "--timeout-s"}},
      {"tune-worker", {}, {"--shapes", "--libtype", "--warmup", "--iters", "--err-ratio", "--skip"}},
      {"repro", {}, {"--kernel", "--m"}},
      {"check", {"--quick"}, {"--kernel"}},
  };
  return c;
}

using i128 = __int128;

// The reference for parse_int: an optional sign, 1+ digits, at most 20 characters, value in [lo, hi].
bool oracle_int(const std::string& s, int64_t lo, int64_t hi, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  i128 v = 0;
  for (size_t j = i; j < s.size(); ++j) {
    if (s[j] < '0' || s[j] > '9') return false;
    v = v * 10 + (s[j] - '0');
    if (v > (i128(1) << 64)) v = i128(1) << 64;  // saturate: out of int64 range either way
  }
  if (s[0] == '-') v = -v;
  if (v < lo || v > hi) return false;
  *out = int64_t(v);
  return true;
}

void check_parse_int(const std::string& s, int64_t lo, int64_t hi) {
  int64_t got = 12345, want = 0;
  bool ok = parse_int(s, lo, hi, &got);
  bool want_ok = oracle_int(s, lo, hi, &want);
  FUZZ_CHECK(ok == want_ok, "parse_int('" + s + "', " + std::to_string(lo) + ", " + std::to_string(hi) + ") = " +
                                (ok ? "accepted" : "rejected"));
  if (ok) FUZZ_CHECK(got == want && got >= lo && got <= hi, "parse_int('" + s + "') = " + std::to_string(got));
  else FUZZ_CHECK(got == 12345, "parse_int wrote its output on failure");
}

bool looks_like_option(const std::string& a) { return a.size() > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9'); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> argv;
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') argv.push_back(cur), cur.clear();
    else cur += char(data[i]);
  }
  argv.push_back(cur);
  std::string cmd = argv.front();
  argv.erase(argv.begin());
  const Command* command = &commands()[0];
  for (const Command& c : commands())
    if (cmd == c.name) command = &c;

  Args a(argv, command->flags, command->options);
  if (a.ok()) {
    FUZZ_CHECK(a.error().empty(), "ok() with an error");
    for (const std::string& p : a.positional()) FUZZ_CHECK(!looks_like_option(p), "option-like positional '" + p + "'");
    FUZZ_CHECK(a.positional().size() <= argv.size(), "more positionals than arguments");
  } else {
    FUZZ_CHECK(!a.error().empty(), "not ok() without an error");
  }
  for (const std::string& f : command->flags) (void)a.flag(f);
  // Every accessor, with the ranges the commands use.
  const int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  struct IntRange { int64_t def, lo, hi; };
  for (const std::string& o : command->options) {
    std::string v = a.str(o, "default");
    FUZZ_CHECK(a.has(o) || v == "default", "str() of an absent option is not the default");
    for (IntRange r : {IntRange{5, 0, 10000}, IntRange{30, 1, 100000}, IntRange{132, 1, 100000}, IntRange{0, 1, int64_t(1) << 31},
                       IntRange{1, 1, kMax}, IntRange{0, kMin, kMax}}) {
      Args copy = a;
      int64_t got = copy.int_opt(o, r.def, r.lo, r.hi);
      if (copy.error() == a.error()) FUZZ_CHECK(got == r.def || (got >= r.lo && got <= r.hi), "int_opt out of range");
      else FUZZ_CHECK(got == r.def && a.ok(), "int_opt failed without returning the default");
    }
    for (auto [def, lo, hi] : {std::tuple<double, double, double>{0.05, 0, 1}, {3, 0, 100}}) {
      Args copy = a;
      double got = copy.double_opt(o, def, lo, hi);
      FUZZ_CHECK(got == def || (got >= lo && got <= hi), "double_opt out of range");
    }
  }
  // parse_int on every argument, with the commands' ranges and the extremes.
  for (const std::string& s : argv)
    for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, kMax}, {kMin, kMax}, {1, int64_t(1) << 31}, {0, 1023}, {-5, -1}})
      check_parse_int(s, lo, hi);
  return 0;
}
