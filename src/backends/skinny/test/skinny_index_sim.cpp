// CPU check of the skinny kernel's indexing: a line-by-line transcription of skinny_gemm_kernel (K slicing,
// the 16-byte-chunk -> mma fragment map, row/column clamps, K tail guards, shared-memory partial tiles, the
// warp and cluster reductions) run warp by warp, with mma.m16n8k16 evaluated from the PTX fragment tables.
// Operands hold small integers, so every order of summation is exact and results must equal the reference
// exactly. Also checks: no read outside X / W (allocations sized (rows-1)*ld+cols), 16-byte loads aligned,
// every Y element written exactly once, nothing else written.
//
//   g++ -O2 -std=c++20 -I include -I src -I /usr/local/cuda/include
//       src/backends/skinny/test/skinny_index_sim.cpp -o /tmp/skinny_sim && /tmp/skinny_sim
//
// Keep it in step with skinny_kernel.cuh when the kernel changes.
#include "backends/skinny/skinny_config.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <random>
#include <algorithm>
#include <cmath>
using namespace tgemm::skinny;
using u32 = uint32_t;
struct U4 { u32 x, y, z, w; };
static int fails = 0;
#define CHECK(c, ...) do { if (!(c)) { printf("FAIL %s:%d ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); if (++fails > 20) exit(1); } } while (0)

// Elements are bf16 bit patterns of small integers (exact in bf16 and in fp32 sums).
static float bits2f(u32 b) { float f; u32 x = b << 16; memcpy(&f, &x, 4); return f; }
static u32 f2bits(float f) { u32 x; memcpy(&x, &f, 4); return x >> 16; }  // exact for small ints

struct Mem { const std::vector<uint16_t>* a; const char* name; };
static u32 ld16(const Mem& m, int64_t idx) { CHECK(idx >= 0 && idx < (int64_t)m.a->size(), "%s OOB read %lld size %zu", m.name, (long long)idx, m.a->size()); if (idx < 0 || idx >= (int64_t)m.a->size()) return 0; return (*m.a)[idx]; }
static U4 ld_elems(const Mem& m, int64_t idx, int64_t valid) {
  u32 e[8]; for (int i = 0; i < 8; ++i) e[i] = i < valid ? ld16(m, idx + i) : 0u;
  return {e[0] | (e[1] << 16), e[2] | (e[3] << 16), e[4] | (e[5] << 16), e[6] | (e[7] << 16)};
}
static U4 ld_vec(const Mem& m, int64_t idx) { CHECK(idx % 8 == 0, "%s misaligned vec load %lld", m.name, (long long)idx); return ld_elems(m, idx, 8); }
static U4 ld_chunk(bool VEC, bool GUARD, const Mem& m, int64_t idx, int64_t kc, int64_t k) {
  if (GUARD) { int64_t valid = k - kc; if (VEC && valid >= 8) return ld_vec(m, idx); return ld_elems(m, idx, valid); }
  if (VEC) return ld_vec(m, idx);
  return ld_elems(m, idx, 8);
}
static float lo(u32 r) { return bits2f(r & 0xffff); }
static float hi(u32 r) { return bits2f(r >> 16); }
// warp-wide mma: a[lane][4], b[lane][2], c[lane][4]
static void mma(float c[32][4], const u32 a[32][4], const u32 b[32][2]) {
  float A[16][16], B[16][8];
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 8; ++i) {
      int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
      int col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      u32 r = a[lane][i / 2]; A[row][col] = (i & 1) ? hi(r) : lo(r);
    }
    for (int i = 0; i < 4; ++i) {
      int row = t * 2 + (i & 1) + (i >= 2 ? 8 : 0);
      u32 r = b[lane][i / 2]; B[row][g] = (i & 1) ? hi(r) : lo(r);
    }
  }
  float C[16][8];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 8; ++j) { float s = 0; for (int kk = 0; kk < 16; ++kk) s += A[i][kk] * B[kk][j]; C[i][j] = s; }
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; ++i) { int row = i < 2 ? g : g + 8; int col = t * 2 + (i & 1); c[lane][i] += C[row][col]; }
  }
}

// returns per (m,n) value; asserts writes exactly once
static void run_sim(int MT, bool VEC, const Params& p, const LaunchShape& sh,
                    const std::vector<uint16_t>& X, const std::vector<uint16_t>& W, std::vector<float>& Y, std::vector<int>& wcount, int64_t ysize) {
  const int NB = MT / 8, D = depth_for(MT, VEC);
  Mem mw{&W, "W"}, mx{&X, "X"};
  for (int64_t bx = 0; bx < sh.blocks; bx += p.s) {  // one cluster at a time
    std::vector<std::vector<float>> parts(p.s, std::vector<float>(part_floats(MT), NAN));
    for (int srank = 0; srank < p.s; ++srank) {
      const int64_t block = bx + srank;
      std::vector<float>& part = parts[srank];
      const int wkl = p.wk_log2, WK = 1 << wkl, brl = 7 - wkl, BR = 1 << brl, BRP = BR + kPartPad, S = p.s;
      const int64_t rt = block / S; CHECK(block - rt * S == srank, "rank");
      const int64_t n0 = rt * BR; const int m = p.m;
      for (int warp = 0; warp < 8; ++warp) {
        const int wk = warp & (WK - 1), wn = warp >> wkl;
        const int64_t nw = n0 + wn * kWarpRows;
        float acc[8][32][4] = {};
        const int64_t slice = int64_t(srank) * WK + wk, sb = slice * p.sps, se = std::min(sb + p.sps, p.k_steps);
        if (nw < p.n && sb < se) {
          auto iter = [&](bool GUARD, int64_t kb, int nvalid) {
            U4 wv[8][2][32];
            const int U = GUARD ? 1 : nvalid;
            for (int j = 0; j < U; ++j) for (int lane = 0; lane < 32; ++lane) {
              int g = lane >> 2, t = lane & 3; int64_t klane = 8 * t;
              int64_t rlo = std::min(nw + g, p.n - 1), rhi = std::min(nw + g + 8, p.n - 1);
              if (!GUARD || j < nvalid) {
                int64_t off = kb + 32 * j;
                wv[j][0][lane] = ld_chunk(VEC, GUARD, mw, rlo * p.ldw + klane + off, off + klane, p.k);
                wv[j][1][lane] = ld_chunk(VEC, GUARD, mw, rhi * p.ldw + klane + off, off + klane, p.k);
              } else wv[j][0][lane] = wv[j][1][lane] = {0,0,0,0};
            }
            for (int j = 0; j < U; ++j) {
              if (GUARD && j >= nvalid) break;
              int64_t off = kb + 32 * j;
              for (int nb = 0; nb < NB; ++nb) {
                if (nb > 0 && nb * 8 >= m) break;
                u32 A0[32][4], A1[32][4], B0[32][2], B1[32][2];
                for (int lane = 0; lane < 32; ++lane) {
                  int g = lane >> 2, t = lane & 3; int64_t klane = 8 * t;
                  int xr = std::min(nb * 8 + g, m - 1);
                  U4 b = ld_chunk(VEC, GUARD, mx, xr * p.ldx + klane + off, off + klane, p.k);
                  U4 l = wv[j][0][lane], h = wv[j][1][lane];
                  A0[lane][0] = l.x; A0[lane][1] = h.x; A0[lane][2] = l.y; A0[lane][3] = h.y; B0[lane][0] = b.x; B0[lane][1] = b.y;
                  A1[lane][0] = l.z; A1[lane][1] = h.z; A1[lane][2] = l.w; A1[lane][3] = h.w; B1[lane][0] = b.z; B1[lane][1] = b.w;
                }
                mma(acc[nb], A0, B0); mma(acc[nb], A1, B1);
              }
            }
          };
          // The kernel's ring: steps [sb, fe) unguarded (in order; the ring only changes when loads issue), then at
          // most one guarded step. The L2 prefetches before the PDL wait must stay inside W.
          const int64_t fe = std::min(se, p.k / kStepK);
          for (int lane = 0; lane < 32; ++lane)
            for (int j = 0; j < 2 * D; ++j)
              if (sb + j < fe) {
                int g = lane >> 2, t = lane & 3;
                int64_t rlo = std::min(nw + g, p.n - 1), rhi = std::min(nw + g + 8, p.n - 1);
                for (int64_t r : {rlo, rhi}) ld_elems(mw, r * p.ldw + 8 * t + (sb + j) * kStepK, 8);
              }
          for (int64_t step = sb; step < fe; ++step) iter(false, step * kStepK, 1);
          if (fe < se) { CHECK(se - fe == 1, "guarded steps %lld", (long long)(se - fe)); iter(true, fe * kStepK, 1); }
        }
        float* mine = part.data() + (wk * MT) * BRP;
        for (int lane = 0; lane < 32; ++lane) {
          int g = lane >> 2, t = lane & 3; const int r0 = wn * kWarpRows + g;
          for (int nb = 0; nb < NB; ++nb) {
            if (nb > 0 && nb * 8 >= m) break;
            const int mm = nb * 8 + 2 * t;
            auto put = [&](int idx, float v) { CHECK(idx >= 0 && (wk * MT) * BRP + idx < part_floats(MT), "part OOB"); mine[idx] = v; };
            put(mm * BRP + r0, acc[nb][lane][0]); put((mm + 1) * BRP + r0, acc[nb][lane][1]);
            put(mm * BRP + r0 + 8, acc[nb][lane][2]); put((mm + 1) * BRP + r0 + 8, acc[nb][lane][3]);
          }
        }
      }
      // block-level reduce
      const int total = m * BR;
      for (int idx = 0; idx < total; ++idx) {
        const int mm = idx >> brl, r = idx & (BR - 1);
        const int64_t n = n0 + r;
        if (S == 1 && n >= p.n) continue;
        float v = part[mm * BRP + r];
        for (int q = 1; q < WK; ++q) v += part[(q * MT + mm) * BRP + r];
        if (S == 1) {
          int64_t off = int64_t(mm) * p.ldy + n; CHECK(off < ysize, "Y OOB");
          if (n < p.n) { Y[off] = v; wcount[off]++; }
        } else part[mm * BRP + r] = v;
      }
    }
    if (p.s > 1) {
      for (int srank = 0; srank < p.s; ++srank) {
        const int wkl = p.wk_log2, brl = 7 - wkl, BR = 1 << brl, BRP = BR + kPartPad, S = p.s;
        const int64_t rt = (bx + srank) / S, n0 = rt * BR; const int total = p.m * BR;
        for (int idx = srank * kThreads; idx < total; idx += S * kThreads)
          for (int tid = 0; tid < kThreads && idx + tid < total; ++tid) {
            int id = idx + tid; const int mm = id >> brl, r = id & (BR - 1); const int64_t n = n0 + r;
            if (n >= p.n) continue;
            float v = parts[0][mm * BRP + r];
            for (int q = 1; q < S; ++q) v += parts[q][mm * BRP + r];
            int64_t off = int64_t(mm) * p.ldy + n; CHECK(off < ysize, "Y OOB"); Y[off] = v; wcount[off]++;
          }
      }
    }
  }
}

int main() {
  std::mt19937 rng(123);
  int ncase = 0;
  const int Ms[] = {1, 2, 3, 5, 8, 9, 13, 16, 17, 24, 31, 33, 40, 57, 64};
  const int64_t Ns[] = {1, 5, 16, 17, 31, 130, 257};
  const int64_t Ks[] = {1, 7, 8, 9, 31, 32, 33, 64, 100, 255, 256, 257, 520, 1031};
  for (int MT : {8, 16, 32, 64}) for (bool VEC : {true, false}) for (int m : Ms) {
    if (m > MT) continue;
    for (int64_t n : Ns) for (int64_t k : Ks) {
      int splits[] = {1, 2, 4, 8, 16, 32, 64, 0};
      for (int sp : splits) {
        if ((rng() % 6) != 0 && sp != 0) continue;  // sample
        const int mwk = max_wk_for(MT, VEC);
        if (sp > mwk * 8) continue;
        int split = sp ? sp : auto_split(m, n, k, mwk, 132, 2, depth_for(MT, VEC));
        LaunchShape sh = launch_shape(n, k, split, mwk);
        int pad = VEC ? 8 * (rng() % 2) : (rng() % 5);
        int64_t ldx = VEC ? (k + 7) / 8 * 8 + pad : k + pad, ldw = VEC ? (k + 7) / 8 * 8 + (rng() % 2) * 8 : k + rng() % 3, ldy = n + rng() % 3;
        std::vector<uint16_t> X((m - 1) * ldx + k), W((n - 1) * ldw + k);
        for (auto& e : X) e = f2bits(float(int(rng() % 9) - 4));
        for (auto& e : W) e = f2bits(float(int(rng() % 9) - 4));
        int64_t ysize = (m - 1) * ldy + n;
        std::vector<float> Y(ysize, NAN); std::vector<int> wc(ysize, 0);
        Params p; p.ldx = ldx; p.ldw = ldw; p.ldy = ldy; p.n = n; p.k = k; p.k_steps = sh.k_steps; p.sps = sh.sps; p.m = m; p.wk_log2 = sh.wk_log2; p.s = sh.s;
        CHECK(sh.s <= 8, "cluster %d", sh.s);
        run_sim(MT, VEC, p, sh, X, W, Y, wc, ysize);
        for (int mm = 0; mm < m; ++mm) for (int64_t nn = 0; nn < n; ++nn) {
          double ref = 0; for (int64_t kk = 0; kk < k; ++kk) ref += double(bits2f(X[mm * ldx + kk])) * bits2f(W[nn * ldw + kk]);
          int64_t off = mm * ldy + nn;
          CHECK(wc[off] == 1, "MT=%d VEC=%d m=%d n=%lld k=%lld T=%d: (%d,%lld) written %d times", MT, VEC, m, (long long)n, (long long)k, split, mm, (long long)nn, wc[off]);
          CHECK(Y[off] == ref, "MT=%d VEC=%d m=%d n=%lld k=%lld T=%d: (%d,%lld) %f vs %f", MT, VEC, m, (long long)n, (long long)k, split, mm, (long long)nn, Y[off], ref);
        }
        for (int64_t i = 0; i < ysize; ++i) if (i % ldy >= n) CHECK(wc[i] == 0, "pad written");
        ++ncase;
      }
    }
  }
  printf("%d cases, %d failures\n", ncase, fails);
  return fails != 0;
}
