// Where a kernel's ring starts inside its dynamic shared memory.
//
// The dynamic window starts right after the kernel's static shared memory and is only 16-byte aligned, whatever
// `extern __shared__ __align__(1024)` says. Rings need more: a 128-byte-swizzled tile must start on a 1024-byte
// boundary (the swizzle repeats every 8 rows of 128 B, and wgmma's descriptors assume phase zero), and 1D bulk copies
// into a ring 80 bytes off a 128-byte line ran 10% slower (run 324, the row-stream kernel). So every kernel reserves
// kSmemAlign bytes more than its layout and starts at smem_align_up of the window's address.
// Plain C++: the launch code and the CPU tests size shared memory with it too.
#pragma once

#include <cstdint>

namespace tgemm {

inline constexpr uint32_t kSmemAlign = 1024;

// The first kSmemAlign boundary at or above a shared-memory address.
constexpr uint32_t smem_align_up(uint32_t addr) { return (addr + kSmemAlign - 1) & ~(kSmemAlign - 1); }
// The bytes from addr to that boundary: at most kSmemAlign - 16 for a 16-byte aligned window.
constexpr uint32_t smem_align_pad(uint32_t addr) { return smem_align_up(addr) - addr; }

static_assert((kSmemAlign & (kSmemAlign - 1)) == 0, "a power of two");
static_assert(smem_align_up(1104) == 2048 && smem_align_pad(1104) == 944 && smem_align_up(2048) == 2048);

}  // namespace tgemm
