// The one interface every backend implements. The dispatcher knows kernels only through it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "tgemm/types.h"

namespace tgemm {

// The backends (the CSV's `libtype` column).
enum class Backend : uint8_t { sm90, skinny, cublaslt, reference };
std::string_view backend_name(Backend b);
bool parse_backend(std::string_view s, Backend* out);

// Everything a kernel needs to decide whether it can run a problem. Pointers are not part of it, only
// their alignment, so a Problem is also a cache key.
struct Problem {
  int64_t m = 0, n = 0, k = 0;
  DType in_dtype = DType::bf16;    // X and W
  DType out_dtype = DType::bf16;   // Y
  bool has_bias = false;
  DType bias_dtype = DType::bf16;  // meaningful only with has_bias
  int64_t ldx = 0, ldw = 0, ldy = 0;  // elements
  // Largest power of two (capped at 16) dividing each base address, in bytes.
  int align_x = 16, align_w = 16, align_y = 16, align_bias = 16;

  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  // X, W, Y (and bias) each once.
  double min_bytes() const;
};

bool operator==(const Problem& a, const Problem& b);

// Arrival counters of a split across CTAs that are zero when a kernel starts and that the kernel leaves zero (the
// last arrival at each counter resets it). The dispatcher keeps one set per device and stream, allocated with the
// stream's workspace and zeroed once, so a split launch needs no memset node of its own; the memset before each launch
// cost ~3 us per graph replay (docs/benchmarks.md, run 80). Null where the caller has none: kernels then zero counters
// in their workspace.
struct ZeroedCounters {
  uint32_t* ptr = nullptr;
  int64_t count = 0;
  bool holds(int64_t n) const { return ptr != nullptr && n <= count; }
};

// A problem with real pointers: what `run` receives.
struct GemmArgs {
  Problem p;
  const void* x = nullptr;     // [M, K], ld = p.ldx
  const void* w = nullptr;     // [N, K], ld = p.ldw
  const void* bias = nullptr;  // [N] or null
  void* y = nullptr;           // [M, N], ld = p.ldy
  ZeroedCounters counters;     // the stream's (see above); null outside the dispatcher
};

constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

// What a kernel can address. can_implement derives from these and nothing else decides.
struct Limits {
  // Width of the element offsets the kernel computes itself (row * ld + col) into each operand.
  // 32 means every offset it forms must stay below 2^31.
  int y_index_bits = 64;
  int x_index_bits = 64;
  int w_index_bits = 64;
  // TMA (cp.async.bulk.tensor): coordinates are int32, so every row/column index must be < 2^31;
  // each global dimension <= 2^32; global strides are multiples of 16 bytes and < 2^40.
  bool uses_tma = false;
  // Leading dimensions must be multiples of this many elements (8 for TMA's 16-byte stride rule).
  int ld_multiple = 1;
  // K must be a multiple of this many elements (the row-stream kernels move whole 16-byte words of each row).
  int k_multiple = 1;
  // Required base-pointer alignment in bytes for X, W, Y.
  int ptr_align = 2;
  int bias_align = 2;
  // Problem-size bounds (e.g. skinny kernels only take small M).
  int64_t min_m = 1, max_m = kNoLimit;
  int64_t max_n = kNoLimit, max_k = kNoLimit;
  // Grid limits, for kernels that map tiles onto a grid dimension (tiles = ceil(dim / tile)).
  int64_t tile_m = 1, tile_n = 1;
  int64_t max_m_tiles = kNoLimit, max_n_tiles = kNoLimit;
  // Supported dtypes, as bit sets over DType.
  uint8_t in_dtypes = 0b011;    // bf16 | fp16
  uint8_t out_dtypes = 0b111;   // bf16 | fp16 | fp32
  bool bias_same_as_input = true;  // bias may have the input dtype
  bool bias_fp32 = true;           // bias may be fp32
  bool k_zero = true;              // handles K == 0
};

constexpr uint8_t dtype_bit(DType t) { return uint8_t(1u << unsigned(t)); }

// can_implement's answer. `addressing` means only offsets/sizes are out of range: a smaller piece of the
// same problem would fit, so the dispatcher may split. `unsupported` means no piece would.
struct Verdict {
  enum class Kind : uint8_t { ok, addressing, unsupported };
  Kind kind = Kind::ok;
  std::string reason;  // with the numbers, e.g. "M*ldy = 4718592000 >= 2^31 (int32 Y offset)"
  bool ok() const { return kind == Kind::ok; }
  static Verdict Ok() { return {}; }
};

// The generic check of a problem against declared limits.
Verdict check_limits(const Limits& lim, const Problem& p);

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const std::string& name() const = 0;
  virtual Backend backend() const = 0;
  virtual const Limits& limits() const = 0;
  // Same bits on every run of the same problem (no order-dependent atomics).
  virtual bool deterministic() const { return true; }
  // An algorithm fixed when a shape was tuned, whose limits nobody declares: only its vendor's check on the real
  // problem vouches for it, and it has been run only at the shape it was tuned at. The dispatcher does not take such
  // a kernel from a table row tuned at a smaller M than the problem's (the seed incident's mapping: every M > 8192
  // with N > 4096 pads to a row at M = 8192). Written after run 286's apparent hang of one at M = 340000, which run
  // 309 showed to be the tuner's watchdog (TimingOptions::heartbeat); the rule stands on the missing limits alone.
  virtual bool tuned_shape_only() const { return false; }
  // The kernels that share this one's fate on a problem: where it faults or hangs, so do they, and the tuner drops them
  // all on that shape. Every kernel is its own family, except a configured cuBLASLt algorithm's cluster shapes (the
  // name up to "_cl"), which share the tile and the kernel code. (Run 295's 13 "hangs" at M = 340000, the reason
  // for this, were the tuner's watchdog misreading a long timing round; docs/benchmarks.md, session 35.)
  virtual std::string fault_family() const { return name(); }
  virtual Verdict can_implement(const Problem& p) const { return check_limits(limits(), p); }
  virtual size_t workspace_bytes(const Problem&) const { return 0; }
  // How `run` divides this problem's work where that depends on the problem (a split plan), in words for `tgemm
  // explain`; empty where there is nothing to say.
  virtual std::string describe_run(const Problem&) const { return {}; }
  // Enqueues on `stream`. Precondition: can_implement(args.p).ok(). Must not allocate or synchronise.
  virtual Status run(const GemmArgs& args, void* workspace, size_t workspace_bytes,
                     cudaStream_t stream) const = 0;
};

}  // namespace tgemm
