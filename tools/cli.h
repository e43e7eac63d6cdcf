// A small, strict argument parser for the `tgemm` command: unknown options and bad values are errors.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tgemm::cli {

class Args {
 public:
  // `flags`: options without a value; `options`: options taking one value.
  Args(std::vector<std::string> argv, std::set<std::string> flags, std::set<std::string> options);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const std::vector<std::string>& positional() const { return pos_; }
  bool flag(const std::string& f) const { return flags_on_.count(f) > 0; }
  bool has(const std::string& o) const { return values_.count(o) > 0; }
  std::string str(const std::string& o, const std::string& def = "") const;
  // Parses an integer option within [lo, hi]; sets error() on failure.
  int64_t int_opt(const std::string& o, int64_t def, int64_t lo, int64_t hi);
  double double_opt(const std::string& o, double def, double lo, double hi);
  void fail(const std::string& msg) {
    if (error_.empty()) error_ = msg;
  }

 private:
  std::vector<std::string> pos_;
  std::set<std::string> flags_on_;
  std::map<std::string, std::string> values_;
  std::string error_;
};

// Strict integer parse: the whole string, in range.
bool parse_int(const std::string& s, int64_t lo, int64_t hi, int64_t* out);

int cmd_explain(const std::vector<std::string>& argv);
int cmd_kernels(const std::vector<std::string>& argv);
int cmd_bench(const std::vector<std::string>& argv);
int cmd_tune(const std::vector<std::string>& argv);
int cmd_repro(const std::vector<std::string>& argv);
int cmd_check(const std::vector<std::string>& argv);

}  // namespace tgemm::cli
