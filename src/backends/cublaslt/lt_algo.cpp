#include "backends/cublaslt/lt_algo.h"

#include <charconv>
#include <limits>

namespace tgemm::cublaslt_detail {

namespace {

// The fields of a name in order, after kLtAlgoPrefix: their tags and where each goes.
template <typename F>
bool each_field(F&& f) {
  return f("", 0) && f("_t", 1) && f("_s", 2) && f("_k", 3) && f("_r", 4) && f("_w", 5) && f("_c", 6) && f("_i", 7) &&
         f("_cl", 8);
}

}  // namespace

std::string LtAlgoConfig::name() const {
  return std::string(kLtAlgoPrefix) + std::to_string(id) + "_t" + std::to_string(tile) + "_s" + std::to_string(stages) + "_k" +
         std::to_string(split_k) + "_r" + std::to_string(reduction) + "_w" + std::to_string(swizzle) + "_c" +
         std::to_string(custom) + "_i" + std::to_string(inner) + "_cl" + std::to_string(cluster);
}

std::optional<LtAlgoConfig> parse_lt_algo_name(std::string_view name) {
  if (name.substr(0, kLtAlgoPrefix.size()) != kLtAlgoPrefix) return std::nullopt;
  std::string_view rest = name.substr(kLtAlgoPrefix.size());
  int64_t v[9] = {};
  const bool ok = each_field([&](std::string_view tag, int i) {
    if (rest.substr(0, tag.size()) != tag) return false;
    rest.remove_prefix(tag.size());
    // Digits only (no sign, no leading '+'), so that one configuration has one name.
    if (rest.empty() || rest[0] < '0' || rest[0] > '9' || (rest[0] == '0' && rest.size() > 1 && rest[1] >= '0' && rest[1] <= '9'))
      return false;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v[i]);
    if (ec != std::errc() || v[i] > std::numeric_limits<int32_t>::max()) return false;
    rest.remove_prefix(size_t(end - rest.data()));
    return true;
  });
  if (!ok || !rest.empty() || v[7] > 0xffff || v[8] > 0xffff) return std::nullopt;
  LtAlgoConfig c;
  c.id = int32_t(v[0]);
  c.tile = uint32_t(v[1]);
  c.stages = uint32_t(v[2]);
  c.split_k = int32_t(v[3]);
  c.reduction = uint32_t(v[4]);
  c.swizzle = uint32_t(v[5]);
  c.custom = uint32_t(v[6]);
  c.inner = uint16_t(v[7]);
  c.cluster = uint16_t(v[8]);
  if (c.split_k < 1) return std::nullopt;
  return c;
}

}  // namespace tgemm::cublaslt_detail
