// Persistent tile scheduler: a static, strided walk over output tiles in cluster units, with grouped
// rasterisation. Producer, consumers and storers of a CTA each run their own copy and see the same sequence,
// which is what keeps their pipelines in step without any communication beyond the mbarriers.
//
// Split-K (SK): the last `split_tiles` tiles (all of them, or a stream-K tail) are divided into `splits` k-ranges
// each, and the walk covers those split units first, then the other (head) tiles whole: unit u < split_tiles *
// splits is split u % splits of tile head + u / splits, a later unit u is tile u - split_tiles * splits. Split s
// covers q or q + 1 k-steps (q = num_k / splits, the first num_k % splits splits one more). A tile's splits are
// consecutive units, so consecutive CTAs run them at the same time and the last of them to finish finds the others'
// partials already written. Split units first: with a stream-K tail a CTA's partial-tile traffic then overlaps its
// next (whole) tile's main loop, and every CTA ends on whole tiles in the same round.
//
// Column tail (SK, `by_columns`): the split tiles are divided into kColumnParts = 2 column halves over all of K,
// walked after the whole tiles (unit head + 2 i + h is half h of tile head + i): the unsplit walk with its last
// round's tiles halved. Nothing is reduced, so there is nothing to overlap by walking them first.
#pragma once

#include <cstdint>

namespace tgemm::sm90 {

template <int BM, int BN, int CM, int CN, bool SK = false>
struct TileScheduler {
  // Tiles are grouped kGroupM block-rows tall: the CTAs resident at one time then cover a band of X rows
  // (kGroupM * BM) against a sweep of W, so the X band stays in L2 while W streams through it once per band
  // instead of once per block-row.
  static constexpr uint32_t kGroupM = 16 / CM;  // in cluster units (16 block-rows)

  uint32_t cm_tiles;  // cluster tiles along M
  uint32_t cn_tiles;  // cluster tiles along N
  uint32_t total;     // work units
  uint32_t linear;    // current work unit
  uint32_t stride;    // number of clusters in the grid
  uint32_t splits;    // 1 without split-K
  // Split-K: the current unit's tile and split, kept up to date by advance() without a division per unit, and the
  // k-step partition (split s covers q or q + 1 k-steps from s * q + min(s, r)). With a division by the run-time
  // `splits` per unit in every role (and two 64-bit ones in k_range), the split-K kernel ran 6-14% behind its plain
  // twin even unsplit; built with the plain scheduler instead it ran even with the twin, and with this one it is
  // within ~1% (runs 118, 124 and 125, docs/benchmarks.md).
  uint32_t cur_tile, cur_split;
  uint32_t stride_tiles, stride_splits;  // stride = stride_tiles * splits + stride_splits
  uint32_t head;       // tiles run whole: [0, head); split tiles: [head, head + split_tiles)
  uint32_t sk_units;   // split units, walked first (k-ranges) or last (column halves): split_tiles * splits
  bool by_columns = false;  // the split units are column halves (splits == 2), not k-ranges
  uint32_t num_k;      // k-steps of a tile
  uint32_t k_q, k_r;

  // Precondition (can_implement, launch): the unit count fits in 31 bits; 1 <= splits <= num_k; split_tiles <=
  // the tile count (launch clamps both).
  __device__ TileScheduler(uint32_t m, uint32_t n, uint32_t cluster_id, uint32_t num_clusters, uint32_t num_k_ = 0,
                           uint32_t splits_ = 1, uint32_t split_tiles = 0, bool by_columns_ = false) {
    const uint32_t m_blocks = (m + BM - 1) / BM, n_blocks = (n + BN - 1) / BN;
    cm_tiles = (m_blocks + CM - 1) / CM;
    cn_tiles = (n_blocks + CN - 1) / CN;
    const uint32_t tiles = cm_tiles * cn_tiles;
    splits = SK ? splits_ : 1u;
    linear = cluster_id;
    stride = num_clusters;
    num_k = num_k_;
    total = tiles;
    if constexpr (SK) {
      if (splits == 1) split_tiles = 0;
      head = tiles - split_tiles;
      sk_units = split_tiles * splits;
      total = head + sk_units;
      stride_tiles = num_clusters / splits;
      stride_splits = num_clusters % splits;
      k_q = num_k_ / splits;
      k_r = num_k_ % splits;
      by_columns = by_columns_ && splits == 2;
      if (by_columns) {
        place_column_walk();
      } else if (cluster_id < sk_units) {
        cur_tile = head + cluster_id / splits;
        cur_split = cluster_id % splits;
      } else {
        cur_tile = cluster_id - sk_units;
        cur_split = 0;
      }
    }
  }

  // The current unit's tile (its index among the cluster tiles) and split.
  __device__ uint32_t tile() const { return SK ? cur_tile : linear; }
  __device__ uint32_t split() const { return SK ? cur_split : 0u; }
  // Whether the current unit is one k-range of a split tile, and that tile's index among the split tiles (its
  // partials and arrival counter).
  __device__ bool split_unit() const { return SK && !by_columns && linear < sk_units; }
  __device__ uint32_t split_index() const { return SK ? cur_tile - head : 0u; }
  // Whether the current unit is a column half of a tile, and its first column within the tile.
  __device__ bool column_unit() const { return SK && by_columns && linear >= head; }
  __device__ uint32_t column_offset() const { return column_unit() ? cur_split * (BN / 2) : 0u; }
  // The current unit's k-steps [kb, ke) of the tile's num_k.
  __device__ void k_range(uint32_t& kb, uint32_t& ke) const {
    if constexpr (SK) {
      if (split_unit()) {
        kb = cur_split * k_q + min(cur_split, k_r);
        ke = kb + k_q + (cur_split < k_r ? 1u : 0u);
        return;
      }
    }
    kb = 0;
    ke = num_k;
  }

  __device__ bool valid() const { return linear < total; }
  __device__ void advance() {
    linear += stride;
    if constexpr (SK) {
      if (by_columns) {
        place_column_walk();
      } else if (linear < sk_units) {
        cur_tile += stride_tiles;
        cur_split += stride_splits;
        if (cur_split >= splits) {
          cur_split -= splits;
          ++cur_tile;
        }
      } else {
        cur_tile = linear - sk_units;  // a head tile, whole
        cur_split = 0;
      }
    }
  }
  // The column walk's unit `linear`: whole tiles first, then the halves (shifts, not divisions).
  __device__ void place_column_walk() {
    const bool half = linear >= head;
    cur_tile = half ? head + ((linear - head) >> 1) : linear;
    cur_split = half ? (linear - head) & 1u : 0u;
  }
  // Whether the tile `ahead` steps further along this CTA's sequence exists.
  __device__ bool valid_ahead(uint32_t ahead) const { return uint64_t(linear) + uint64_t(ahead) * stride < total; }

  // Block coordinates (in BM / BN units) of this CTA's tile; `rank_m` / `rank_n` are its position in the cluster.
  __device__ void block(uint32_t rank_m, uint32_t rank_n, uint32_t& m_block, uint32_t& n_block) const {
    const uint32_t t = tile();
    const uint32_t per_group = kGroupM * cn_tiles;
    const uint32_t group = t / per_group;
    const uint32_t first = group * kGroupM;
    const uint32_t rows = min(kGroupM, cm_tiles - first);
    const uint32_t within = t - group * per_group;
    m_block = (first + within % rows) * CM + rank_m;
    n_block = (within / rows) * CN + rank_n;
  }
};

}  // namespace tgemm::sm90
