// Splitting a problem into pieces a kernel can address.
#pragma once

#include <string>
#include <vector>

#include "tgemm/tgemm.h"

namespace tgemm {

// The sub-problem of rows [m0, m0+m) and columns [n0, n0+n): same leading dimensions, base-pointer
// alignment reduced by the byte offset of the piece.
Problem piece_problem(const Problem& p, int64_t m0, int64_t m, int64_t n0, int64_t n);

// The pointers of one piece (64-bit host arithmetic).
GemmArgs piece_args(const GemmArgs& a, const Piece& piece);

// The fewest pieces `k` can address, splitting M (and N when even one row is too much). Every piece
// passes k.can_implement. Returns false (with the reason) when no split works.
bool split_for(const Kernel& k, const Problem& p, std::vector<Piece>* pieces, std::string* why);

}  // namespace tgemm
