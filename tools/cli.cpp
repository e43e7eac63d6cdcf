#include "cli.h"

#include <cerrno>
#include <cstdlib>

namespace tgemm::cli {

bool parse_int(const std::string& s, int64_t lo, int64_t hi, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t j = i; j < s.size(); ++j)
    if (s[j] < '0' || s[j] > '9') return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno == ERANGE || end != s.c_str() + s.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

Args::Args(std::vector<std::string> argv, std::set<std::string> flags, std::set<std::string> options) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() > 1 && a[0] == '-' && !(a.size() > 1 && (a[1] >= '0' && a[1] <= '9'))) {
      std::string name = a, value;
      bool inline_value = false;
      if (auto eq = a.find('='); eq != std::string::npos) name = a.substr(0, eq), value = a.substr(eq + 1), inline_value = true;
      if (flags.count(name)) {
        if (inline_value) { fail("option " + name + " takes no value"); return; }
        flags_on_.insert(name);
      } else if (options.count(name)) {
        if (!inline_value) {
          if (i + 1 >= argv.size()) { fail("option " + name + " needs a value"); return; }
          value = argv[++i];
        }
        values_[name] = value;
      } else {
        fail("unknown option " + a);
        return;
      }
    } else {
      pos_.push_back(a);
    }
  }
}

std::string Args::str(const std::string& o, const std::string& def) const {
  auto it = values_.find(o);
  return it == values_.end() ? def : it->second;
}

int64_t Args::int_opt(const std::string& o, int64_t def, int64_t lo, int64_t hi) {
  if (!has(o)) return def;
  int64_t v = 0;
  if (!parse_int(str(o), lo, hi, &v)) {
    fail(o + ": '" + str(o) + "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return def;
  }
  return v;
}

double Args::double_opt(const std::string& o, double def, double lo, double hi) {
  if (!has(o)) return def;
  const std::string s = str(o);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !(v >= lo && v <= hi)) {
    fail(o + ": '" + s + "' is not a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return def;
  }
  return v;
}

}  // namespace tgemm::cli
