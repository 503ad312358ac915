// Single stages on a one-PE design, worked out by hand to the cycle (see hand_design(): 1 GHz,
// 2-byte words, 64 B/cycle main memory, 512 B/cycle buffer port, everything fits on chip).
#include <gtest/gtest.h>

#include "accel/fast_model.h"
#include "accel/tile_sim.h"
#include "sim_test_util.h"

namespace hwt::accel {
namespace {

using testing::hand_design;
using testing::params;

Stage gemm(int64_t m, int64_t n, int64_t k) {
  Stage s;
  s.kind = StageKind::Gemm;
  s.m = m;
  s.n = n;
  s.k = k;
  return s;
}

Stage rows(StageKind kind, int64_t r, int64_t c) {
  Stage s;
  s.kind = kind;
  s.rows = r;
  s.cols = c;
  s.in_words = s.out_words = static_cast<double>(r * c);
  return s;
}

// 32x32x32 GEMM, 16x16x16 tiles: 8 tiles of 16^3 / 16 = 256 cycles on one 16-MAC lane.
// Loop order bijk: k is innermost, so each output tile is a run of two tiles (k = 0, 1) whose
// partial sums stay in the lane; tiles (i,j,k) = 000, 001, 010, 011, 100, ... Each A or B tile
// is 512 B (8 cycles of main memory, 1 of the port); the port also carries the finished C tile
// (512 B) at the end of a run. With double buffering a lane fetches for its next tile from the
// start of the current one.
//   t0: fetch A00 B00 0..16, port 16..18, compute 18..274
//   t1: fetch A01 B10 from 18: ..34, port ..37 (with C), compute 274..530
//   t2: B01 from 274: ..282, port ..284, compute 530..786
//   t3: B11 from 530: ..538, port ..541, compute 786..1042
//   t4: A10 from 786: ..794, port ..796, compute 1042..1298
//   t5: A11 from 1042: ..1050, port ..1053, compute 1298..1554
//   t6, t7: hits, compute 1554..1810, 1810..2066
//   C tiles are written back as they finish; the last (512 B) after 2066: 2074.
TEST(SimHand, GemmDetailedMatchesHandSchedule) {
  const DesignParams p = params(hand_design());
  const Activity a = detailed_stage(gemm(32, 32, 32), p);
  EXPECT_DOUBLE_EQ(a.cycles, 2074);
  EXPECT_DOUBLE_EQ(a.lane_cycles, 8 * 256);
  EXPECT_DOUBLE_EQ(a.main_bytes, 3 * 32 * 32 * 2);             // A, B, C once each
  EXPECT_DOUBLE_EQ(a.port_bytes, 2 * 2048 + 2 * 2048 + 2048);  // A, B per tile; C per run
}

// Fast: 4 runs of 2 tiles on 1 lane; compute 4 x 512 = 2048; memory 6144 B / 64 = 96 and port
// 10240 B / 512 = 20 hide behind it; the wave (one run) waits for its first A and B tiles:
// (512 + 512) / 64 + 1024 / 512 = 18; its result leaves after it: 512 / 64 = 8. Total 2074.
TEST(SimHand, GemmFastMatchesClosedForm) {
  const DesignParams p = params(hand_design());
  const Activity a = fast_stage(gemm(32, 32, 32), p);
  EXPECT_DOUBLE_EQ(a.cycles, 2074);
  EXPECT_DOUBLE_EQ(a.compute_cycles, 2048);
  EXPECT_DOUBLE_EQ(a.main_bytes, 6144);
  EXPECT_DOUBLE_EQ(a.port_bytes, 10240);
}

// Loop order bikj makes j innermost: runs of two tiles keep their A tile in the lane, and
// partial sums go through the buffer: port = A once (2048) + B per tile (4096) + C (2*2-1) x
// 2048 = 12288 B.
TEST(SimHand, LoopOrderDecidesWhatStaysInTheLane) {
  AccelConfig c = hand_design();
  c.dataflow = parse_loop_order("bikj");
  EXPECT_DOUBLE_EQ(fast_stage(gemm(32, 32, 32), params(c)).port_bytes, 12288);
  EXPECT_DOUBLE_EQ(detailed_stage(gemm(32, 32, 32), params(c)).port_bytes, 12288);
}

// More lanes: 4 PEs x 2 lanes, but only 4 runs (one per output tile), one per PE:
//   lane0 (C00): A00 B00 0..16, port ..18, compute 18..274; A01 B10 32..48, port ..51, 274..530
//   lane1 (C01): B01 16..24 (A00 in flight), port ..26, 26..282; B11 48..56, port ..59, 282..538
//   lane2 (C10): A10 24..32, port ..34, 34..290; A11 56..64, port ..67, 290..546
//   lane3 (C11): all hits once A10 arrives (32), port ..34, 34..290; 290..546
//   results leave in finishing order, 8 cycles each: ..538, ..546, ..554, ..562.
TEST(SimHand, GemmDetailedFourLanes) {
  AccelConfig c = hand_design();
  c.pes = 4;
  c.lanes_per_pe = 2;
  EXPECT_DOUBLE_EQ(detailed_stage(gemm(32, 32, 32), params(c)).cycles, 562);
}

// Fast, same design: one wave of 4 runs, 2 x 256 cycles each. Every lane of the wave waits
// for its first step (prologue: A00, A10, B00, B01 = 2 KiB, 32 cycles, then 2 port cycles)
// and the wave's four results leave after it (epilogue 2 KiB, 32 cycles): 512 + 34 + 32.
TEST(SimHand, GemmFastOneWaveOfRuns) {
  AccelConfig c = hand_design();
  c.pes = 4;
  c.lanes_per_pe = 2;
  const Activity a = fast_stage(gemm(32, 32, 32), params(c));
  EXPECT_DOUBLE_EQ(a.compute_cycles, 512);
  EXPECT_DOUBLE_EQ(a.cycles, 512 + 34 + 32);
}

// Layernorm 32 rows x 64 on one 16-wide unit: 2 tiles of 16 rows x ceil(64/16) = 64 cycles.
// Main memory 1024 B/cycle here. Each tile reads and writes 2 KiB: fetch 2 cycles, port 8.
//   t0: fetch 0..2, port 2..10, compute 10..74, write 74..76
//   t1: fetch from 10 (double buffering) ..12, port ..20, compute 74..138, write 138..140
TEST(SimHand, LayerNormBothFidelities) {
  AccelConfig c = hand_design();
  c.memory.bandwidth_gbps = 1024;
  const DesignParams p = params(c);
  const Stage s = rows(StageKind::LayerNorm, 32, 64);
  const Activity d = detailed_stage(s, p);
  EXPECT_DOUBLE_EQ(d.cycles, 140);
  EXPECT_DOUBLE_EQ(d.layernorm_cycles, 128);
  // Fast: compute 2 waves x 64 = 128; fill 2 + 8; drain 2.
  const Activity f = fast_stage(s, p);
  EXPECT_DOUBLE_EQ(f.cycles, 140);
  EXPECT_DOUBLE_EQ(f.main_bytes, 8192);
}

// Softmax 64 rows x 128 on 2 PEs x 2 units: 4 tiles of 16 rows x 8 cycles = 128 cycles each,
// one wave. Each tile reads and writes 4 KiB: fetch 4 cycles, port 16 (8 KiB / 512).
// Units 0..3 sit on PEs 0, 1, 0, 1, so each port carries two tiles in turn:
//   u0: fetch 0..4, port PE0 4..20, compute 20..148, write 148..152
//   u1: fetch 4..8, port PE1 8..24, compute 24..152, write 152..156
//   u2: fetch 8..12, port PE0 20..36, compute 36..164, write 164..168
//   u3: fetch 12..16, port PE1 24..40, compute 40..168, write 168..172
TEST(SimHand, SoftmaxDetailedSerialisesPorts) {
  AccelConfig c = hand_design();
  c.memory.bandwidth_gbps = 1024;
  c.pes = 2;
  c.softmax_per_pe = 2;
  const Activity d = detailed_stage(rows(StageKind::Softmax, 64, 128), params(c));
  EXPECT_DOUBLE_EQ(d.cycles, 172);
  EXPECT_DOUBLE_EQ(d.softmax_cycles, 4 * 128);
}

// Fast: compute 128; memory 32 KiB / 1024 = 32; ports 32 KiB / (2 x 512) = 32; fill
// 4 + 16 = 20; drain 4: 152. (The fast model overlaps the two port transfers per PE.)
TEST(SimHand, SoftmaxFastClosedForm) {
  AccelConfig c = hand_design();
  c.memory.bandwidth_gbps = 1024;
  c.pes = 2;
  c.softmax_per_pe = 2;
  const Activity f = fast_stage(rows(StageKind::Softmax, 64, 128), params(c));
  EXPECT_DOUBLE_EQ(f.cycles, 152);
  EXPECT_DOUBLE_EQ(f.compute_cycles, 128);
}

// Zero-skipping at density 0.25 (activation and weight sparsity 0.5): 16^3 * 0.25 / 16 = 64
// cycles per tile.
TEST(SimHand, ZeroSkippingScalesTileCycles) {
  AccelConfig c = hand_design();
  c.skip_zeros = true;
  Stage s = gemm(32, 32, 32);
  s.dens_a = s.dens_b = 0.5;
  EXPECT_DOUBLE_EQ(fast_stage(s, params(c)).lane_cycles, 8 * 64);
  EXPECT_DOUBLE_EQ(detailed_stage(s, params(c)).lane_cycles, 8 * 64);
}

// Edge tiles at their real size: 20x16x16 is one full 16-row tile (256 cycles) and one 4-row
// tile (4*16*16/16 = 64 cycles).
TEST(SimHand, EdgeTilesAtRealSize) {
  const Stage s = gemm(20, 16, 16);
  EXPECT_DOUBLE_EQ(fast_stage(s, params(hand_design())).lane_cycles, 256 + 64);
  EXPECT_DOUBLE_EQ(detailed_stage(s, params(hand_design())).lane_cycles, 256 + 64);
}

}  // namespace
}  // namespace hwt::accel
