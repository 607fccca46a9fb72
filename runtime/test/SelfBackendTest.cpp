//===- SelfBackendTest.cpp - the runtime on one rank, in process ----------===//

#include "TestValues.h"
#include "dist_runtime/dist_runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace testvalues;

namespace {

class SelfRuntime : public ::testing::Test {
protected:
  void SetUp() override {
    setenv("DIST_BACKEND", "self", 1);
    ASSERT_EQ(distrt_init(1), DISTRT_OK) << distrt_last_error();
  }
  void TearDown() override {
    if (distrt_is_initialized())
      EXPECT_EQ(distrt_finalize(), DISTRT_OK) << distrt_last_error();
    unsetenv("DIST_TRACE");
  }
};

TEST_F(SelfRuntime, Identity) {
  EXPECT_STREQ(distrt_backend_name(), "self");
  EXPECT_EQ(distrt_rank(), 0);
  EXPECT_EQ(distrt_world_size(), 1);
}

TEST_F(SelfRuntime, EveryCollectiveCopiesOverOneRank) {
  for (distrt_dtype t : kDtypes)
    for (distrt_reduction op : kReductions) {
      const int64_t n = 7;
      std::vector<unsigned char> send(n * sizeOf(t)), recv(n * sizeOf(t));
      for (int64_t i = 0; i < n; ++i)
        store(send.data(), i, t, input(0, i, op));
      ASSERT_EQ(distrt_all_reduce(0, send.data(), recv.data(), n, t, op),
                DISTRT_OK)
          << distrt_last_error();
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(load(recv.data(), i, t), reduced(1, i, op, t));
      std::fill(recv.begin(), recv.end(), 0);
      ASSERT_EQ(distrt_reduce_scatter(0, send.data(), n, recv.data(), n, t, op),
                DISTRT_OK)
          << distrt_last_error();
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(load(recv.data(), i, t), reduced(1, i, op, t));
      std::fill(recv.begin(), recv.end(), 0);
      ASSERT_EQ(distrt_all_gather(0, send.data(), n, recv.data(), n, t),
                DISTRT_OK)
          << distrt_last_error();
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(load(recv.data(), i, t), input(0, i, op));
    }
}

TEST_F(SelfRuntime, StashAccumulatesAndIsReleasedByTake) {
  float g1[4] = {1, 2, 3, 4}, g2[4] = {10, 20, 30, 40}, out[4];
  int32_t present = -1;
  ASSERT_EQ(distrt_stash_read("w", out, 4, DISTRT_F32, &present), DISTRT_OK);
  EXPECT_EQ(present, 0);
  EXPECT_EQ(out[0], 0.0f);
  for (int window = 0; window < 3; ++window) {
    ASSERT_EQ(distrt_stash_add("w", g1, 4, DISTRT_F32), DISTRT_OK);
    ASSERT_EQ(distrt_stash_add("w", g2, 4, DISTRT_F32), DISTRT_OK);
    EXPECT_EQ(distrt_stash_bytes(), 16);
    ASSERT_EQ(distrt_stash_read("w", out, 4, DISTRT_F32, &present), DISTRT_OK);
    EXPECT_EQ(present, 1);
    ASSERT_EQ(distrt_stash_take("w", out, 4, DISTRT_F32), DISTRT_OK);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(out[i], g1[i] + g2[i]) << "window " << window;
    EXPECT_EQ(distrt_stash_bytes(), 0);
    // Taking again gives zeros: the stash was consumed exactly once.
    ASSERT_EQ(distrt_stash_take("w", out, 4, DISTRT_F32), DISTRT_OK);
    EXPECT_EQ(out[0], 0.0f);
  }
  distrt_stats stats;
  ASSERT_EQ(distrt_get_stats(&stats), DISTRT_OK);
  EXPECT_EQ(stats.stash_adds, 6);
  EXPECT_EQ(stats.stash_takes, 6);
  EXPECT_EQ(stats.stash_peak_bytes, 16);
  EXPECT_EQ(stats.stash_bytes, 0);
}

TEST_F(SelfRuntime, StashShapeIsCheckedOnEveryCall) {
  float g[4] = {1, 2, 3, 4};
  double d[4] = {};
  ASSERT_EQ(distrt_stash_add("w", g, 4, DISTRT_F32), DISTRT_OK);
  EXPECT_EQ(distrt_stash_add("w", g, 3, DISTRT_F32), DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error())
                .find("the stash of 'w' holds 4 f32 elements, but this call "
                      "passes 3 f32"),
            std::string::npos)
      << distrt_last_error();
  EXPECT_EQ(distrt_stash_take("w", d, 4, DISTRT_F64), DISTRT_ERR_INVALID);
  EXPECT_EQ(distrt_stash_add("", g, 4, DISTRT_F32), DISTRT_ERR_INVALID);
  EXPECT_EQ(distrt_stash_add("w", nullptr, 4, DISTRT_F32), DISTRT_ERR_INVALID);
  float out[4];
  ASSERT_EQ(distrt_stash_take("w", out, 4, DISTRT_F32), DISTRT_OK);
}

// A kept gather communicates once and is then copied, until released.
TEST_F(SelfRuntime, KeptGatherIsReusedUntilReleased) {
  float shard[3] = {1, 2, 3}, out[3];
  for (int window = 0; window < 2; ++window) {
    for (int use = 0; use < 4; ++use) {
      std::fill(out, out + 3, 0.0f);
      ASSERT_EQ(distrt_kept_gather("w", 0, shard, 3, out, 3, DISTRT_F32, 1),
                DISTRT_OK)
          << distrt_last_error();
      EXPECT_EQ(out[2], float(3 + window)) << "window " << window;
      EXPECT_EQ(distrt_kept_bytes(), 12);
    }
    ASSERT_EQ(distrt_kept_release("w"), DISTRT_OK);
    EXPECT_EQ(distrt_kept_bytes(), 0);
    // The next window's shards differ: after the release they are gathered.
    for (float &v : shard)
      v += 1;
  }
  // Releasing what is not kept is nothing.
  ASSERT_EQ(distrt_kept_release("w"), DISTRT_OK);
  distrt_stats stats;
  ASSERT_EQ(distrt_get_stats(&stats), DISTRT_OK);
  EXPECT_EQ(stats.calls[DISTRT_KIND_ALL_GATHER], 2);
  EXPECT_EQ(stats.kept_hits, 6);
  EXPECT_EQ(stats.kept_hit_bytes, 6 * 12);
  EXPECT_EQ(stats.kept_releases, 3);
  EXPECT_EQ(stats.kept_peak_bytes, 12);
  EXPECT_EQ(stats.kept_bytes, 0);
}

// reuse_only: a hit is copied, a miss gathers and keeps nothing.
TEST_F(SelfRuntime, KeptGatherWithoutKeepLeavesNothing) {
  float shard[2] = {5, 6}, out[2];
  ASSERT_EQ(distrt_kept_gather("w", 0, shard, 2, out, 2, DISTRT_F32, 0),
            DISTRT_OK);
  EXPECT_EQ(distrt_kept_bytes(), 0);
  ASSERT_EQ(distrt_kept_gather("w", 0, shard, 2, out, 2, DISTRT_F32, 1),
            DISTRT_OK);
  shard[0] = 50; // a hit does not read the shard
  ASSERT_EQ(distrt_kept_gather("w", 0, shard, 2, out, 2, DISTRT_F32, 0),
            DISTRT_OK);
  EXPECT_EQ(out[0], 5.0f);
  distrt_stats stats;
  ASSERT_EQ(distrt_get_stats(&stats), DISTRT_OK);
  EXPECT_EQ(stats.calls[DISTRT_KIND_ALL_GATHER], 2);
  EXPECT_EQ(stats.kept_hits, 1);
  ASSERT_EQ(distrt_kept_release("w"), DISTRT_OK);
}

TEST_F(SelfRuntime, KeptGatherShapeIsCheckedOnReuse) {
  float shard[4] = {1, 2, 3, 4}, out[4];
  double d[4];
  ASSERT_EQ(distrt_kept_gather("w", 0, shard, 4, out, 4, DISTRT_F32, 1),
            DISTRT_OK);
  EXPECT_EQ(distrt_kept_gather("w", 0, shard, 3, out, 3, DISTRT_F32, 1),
            DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error())
                .find("distrt: rank 0: distrt_kept_gather of 'w': the kept "
                      "gather holds 4 f32 elements gathered on group 0 from 4 "
                      "per rank, but this call asks for 3 f32 elements "
                      "gathered on group 0 from 3 per rank"),
            std::string::npos)
      << distrt_last_error();
  EXPECT_EQ(distrt_kept_gather("w", 0, shard, 4, d, 4, DISTRT_F64, 1),
            DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error()).find("4 f64 elements"),
            std::string::npos)
      << distrt_last_error();
  EXPECT_EQ(distrt_kept_gather("w", 7, shard, 4, out, 4, DISTRT_F32, 1),
            DISTRT_ERR_INVALID);
  EXPECT_EQ(distrt_kept_gather("", 0, shard, 4, out, 4, DISTRT_F32, 1),
            DISTRT_ERR_INVALID);
  EXPECT_EQ(distrt_kept_gather("v", 0, shard, 4, nullptr, 4, DISTRT_F32, 1),
            DISTRT_ERR_INVALID);
  EXPECT_EQ(distrt_kept_gather("v", 0, shard, 4, out, 3, DISTRT_F32, 1),
            DISTRT_ERR_INVALID);
  EXPECT_EQ(distrt_kept_bytes(), 16); // the failed calls kept nothing
  EXPECT_EQ(distrt_kept_release(nullptr), DISTRT_ERR_INVALID);
  ASSERT_EQ(distrt_kept_release("w"), DISTRT_OK);
}

TEST_F(SelfRuntime, StatsCountCallsAndBytes) {
  float a[8] = {}, b[8] = {};
  distrt_reset_stats();
  ASSERT_EQ(distrt_all_reduce(0, a, b, 8, DISTRT_F32, DISTRT_SUM), DISTRT_OK);
  ASSERT_EQ(distrt_all_reduce(0, a, a, 8, DISTRT_F32, DISTRT_SUM), DISTRT_OK);
  ASSERT_EQ(distrt_all_gather(0, a, 4, b, 4, DISTRT_F32), DISTRT_OK);
  distrt_stats s;
  ASSERT_EQ(distrt_get_stats(&s), DISTRT_OK);
  EXPECT_EQ(s.calls[DISTRT_KIND_ALL_REDUCE], 2);
  EXPECT_EQ(s.bytes[DISTRT_KIND_ALL_REDUCE], 64);
  EXPECT_EQ(s.calls[DISTRT_KIND_ALL_GATHER], 1);
  EXPECT_EQ(s.bytes[DISTRT_KIND_ALL_GATHER], 16);
  EXPECT_EQ(s.calls[DISTRT_KIND_REDUCE_SCATTER], 0);
  EXPECT_EQ(s.waits, 3);
  distrt_reset_stats();
  ASSERT_EQ(distrt_get_stats(&s), DISTRT_OK);
  EXPECT_EQ(s.calls[DISTRT_KIND_ALL_REDUCE], 0);
}

TEST_F(SelfRuntime, HandlesAreWaitedOnOnce) {
  float a[2] = {1, 2}, b[2];
  distrt_handle h;
  ASSERT_EQ(distrt_all_reduce_async(0, a, b, 2, DISTRT_F32, DISTRT_SUM, &h),
            DISTRT_OK);
  int32_t done = 0;
  ASSERT_EQ(distrt_test(h, &done), DISTRT_OK);
  EXPECT_EQ(done, 1);
  ASSERT_EQ(distrt_wait(h), DISTRT_OK);
  EXPECT_EQ(distrt_wait(h), DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error())
                .find("distrt_wait: unknown handle " + std::to_string(h)),
            std::string::npos);
  EXPECT_EQ(distrt_wait(12345), DISTRT_ERR_INVALID);
  EXPECT_EQ(distrt_test(12345, &done), DISTRT_ERR_INVALID);
}

TEST_F(SelfRuntime, ProgressCompletesButLeavesTheHandle) {
  EXPECT_EQ(distrt_progress(), DISTRT_OK); // nothing in flight
  double a[3] = {1, 2, 3}, b[3] = {};
  distrt_handle h;
  ASSERT_EQ(distrt_all_reduce_async(0, a, b, 3, DISTRT_F64, DISTRT_AVG, &h),
            DISTRT_OK);
  ASSERT_EQ(distrt_progress(), DISTRT_OK) << distrt_last_error();
  ASSERT_EQ(distrt_progress(), DISTRT_OK) << distrt_last_error();
  distrt_stats s;
  ASSERT_EQ(distrt_get_stats(&s), DISTRT_OK);
  EXPECT_EQ(s.waits, 0);
  ASSERT_EQ(distrt_wait(h), DISTRT_OK) << distrt_last_error();
  EXPECT_EQ(b[2], 3);
  EXPECT_EQ(distrt_wait(h), DISTRT_ERR_INVALID);
  ASSERT_EQ(distrt_get_stats(&s), DISTRT_OK);
  EXPECT_EQ(s.waits, 1);
}

TEST_F(SelfRuntime, WaitSendChecksTheSendBuffer) {
  float a[2] = {1, 2}, b[2], other[2];
  distrt_handle h;
  ASSERT_EQ(distrt_all_reduce_async(0, a, b, 2, DISTRT_F32, DISTRT_SUM, &h),
            DISTRT_OK);
  EXPECT_EQ(distrt_wait_send(h, other), DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error()).find("another send buffer"),
            std::string::npos);
  ASSERT_EQ(distrt_wait_send(h, a), DISTRT_OK);
  EXPECT_EQ(b[1], 2);
  EXPECT_EQ(distrt_wait_send(h, a), DISTRT_ERR_INVALID);
}

TEST_F(SelfRuntime, BadArgumentsNameTheOp) {
  float a[8] = {}, b[8] = {};
  distrt_handle h;
  EXPECT_EQ(distrt_all_gather(0, a, 4, b, 3, DISTRT_F32), DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error())
                .find("distrt: rank 0: all_gather on group 0 (size 1): send "
                      "buffer of 4 elements and receive buffer of 3 elements "
                      "do not match a group of 1 ranks"),
            std::string::npos)
      << distrt_last_error();
  EXPECT_EQ(distrt_all_reduce(7, a, b, 8, DISTRT_F32, DISTRT_SUM),
            DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error()).find("unknown group 7"),
            std::string::npos);
  EXPECT_EQ(distrt_all_reduce(0, a, b, -1, DISTRT_F32, DISTRT_SUM),
            DISTRT_ERR_INVALID);
  EXPECT_EQ(distrt_all_reduce(0, nullptr, b, 8, DISTRT_F32, DISTRT_SUM),
            DISTRT_ERR_INVALID);
  EXPECT_EQ(distrt_all_reduce(0, a, b, 8, distrt_dtype(42), DISTRT_SUM),
            DISTRT_ERR_INVALID);
  EXPECT_EQ(distrt_all_reduce(0, a, b, 8, DISTRT_F32, distrt_reduction(9)),
            DISTRT_ERR_INVALID);
  EXPECT_EQ(distrt_reduce_scatter(0, a, 8, a + 2, 8, DISTRT_F32, DISTRT_SUM),
            DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error()).find("overlap"),
            std::string::npos);
  EXPECT_EQ(
      distrt_all_reduce_async(0, a, b, 8, DISTRT_F32, DISTRT_SUM, nullptr),
      DISTRT_ERR_INVALID);
  (void)h;
}

TEST_F(SelfRuntime, GroupsOfOneRank) {
  int64_t shape[2] = {1, 1}, axes[1] = {1};
  distrt_group g, again;
  ASSERT_EQ(distrt_group_create(2, shape, 1, axes, &g), DISTRT_OK)
      << distrt_last_error();
  ASSERT_EQ(distrt_group_create(2, shape, 1, axes, &again), DISTRT_OK);
  EXPECT_EQ(g, again);
  int64_t size = 0;
  ASSERT_EQ(distrt_group_size(g, &size), DISTRT_OK);
  EXPECT_EQ(size, 1);
  int64_t bad[1] = {2};
  EXPECT_EQ(distrt_group_create(1, bad, 0, nullptr, &g), DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error())
                .find("the mesh has 2 ranks, but the world has 1"),
            std::string::npos);
  int64_t repeated[2] = {0, 0};
  EXPECT_EQ(distrt_group_create(2, shape, 2, repeated, &g), DISTRT_ERR_INVALID);
}

// A group is a set of axes, its members in row-major order: [1, 0] used to
// be accepted, and the cache (keyed by the set) then returned whichever of
// [1, 0] and [0, 1] had been created first, with that one's member order.
TEST_F(SelfRuntime, GroupAxesMustBeStrictlyIncreasing) {
  int64_t shape[2] = {1, 1}, decreasing[2] = {1, 0}, repeated[2] = {1, 1};
  distrt_group g = -1;
  EXPECT_EQ(distrt_group_create(2, shape, 2, decreasing, &g),
            DISTRT_ERR_INVALID);
  EXPECT_EQ(g, -1);
  EXPECT_NE(std::string(distrt_last_error())
                .find("distrt: rank 0: distrt_group_create: expected strictly "
                      "increasing axes, but axis 0 follows axis 1"),
            std::string::npos)
      << distrt_last_error();
  EXPECT_EQ(distrt_group_create(2, shape, 2, repeated, &g), DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error())
                .find("expected strictly increasing axes, but axis 1 follows "
                      "axis 1"),
            std::string::npos)
      << distrt_last_error();
}

// Sizes are int64 and were multiplied unchecked: a mesh of 7 x
// 7905747460161236407 ranks wrapped to 1 and was accepted as this world, and
// 2^62 f32 elements wrapped to 0 bytes, so the call "succeeded" moving none.
TEST_F(SelfRuntime, SizesPastInt64AreRejected) {
  int64_t shape[2] = {7, 7905747460161236407};
  distrt_group g = -1;
  EXPECT_EQ(distrt_group_create(2, shape, 0, nullptr, &g), DISTRT_ERR_INVALID);
  EXPECT_EQ(g, -1);
  EXPECT_NE(std::string(distrt_last_error())
                .find("distrt: rank 0: distrt_group_create: the product of the "
                      "mesh extents overflows int64 (at extent 1, "
                      "7905747460161236407)"),
            std::string::npos)
      << distrt_last_error();
  const int64_t huge = int64_t(1) << 62;
  float a[4] = {}, b[4] = {};
  EXPECT_EQ(distrt_all_reduce(0, a, b, huge, DISTRT_F32, DISTRT_SUM),
            DISTRT_ERR_INVALID);
  EXPECT_NE(
      std::string(distrt_last_error())
          .find("distrt: rank 0: all_reduce on group 0 (size 1): a buffer "
                "of 4611686018427387904 f32 elements per rank overflows "
                "int64 bytes"),
      std::string::npos)
      << distrt_last_error();
  EXPECT_EQ(distrt_all_gather(0, a, huge, b, huge, DISTRT_F32),
            DISTRT_ERR_INVALID);
  EXPECT_EQ(distrt_stash_add("w", a, huge, DISTRT_F32), DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error())
                .find("distrt_stash_add of 'w': 4611686018427387904 f32 "
                      "elements overflow int64 bytes"),
            std::string::npos)
      << distrt_last_error();
  EXPECT_EQ(distrt_stash_bytes(), 0);
  EXPECT_EQ(distrt_stash_take("w", b, huge, DISTRT_F32), DISTRT_ERR_INVALID);
}

TEST_F(SelfRuntime, FinalizeReportsUnwaitedCollectives) {
  float a[2] = {}, b[2];
  distrt_handle h;
  ASSERT_EQ(distrt_all_reduce_async(0, a, b, 2, DISTRT_F32, DISTRT_MAX, &h),
            DISTRT_OK);
  EXPECT_EQ(distrt_finalize(), DISTRT_ERR_STATE);
  EXPECT_NE(std::string(distrt_last_error())
                .find("1 collective(s) were never waited on, the first: "
                      "all_reduce on group 0"),
            std::string::npos)
      << distrt_last_error();
  EXPECT_FALSE(distrt_is_initialized());
}

TEST(SelfRuntimeInit, WorldSizeMustMatchTheCompiledOne) {
  setenv("DIST_BACKEND", "self", 1);
  EXPECT_EQ(distrt_init(4), DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error())
                .find("the program was compiled for 4 ranks, but 1 were "
                      "launched"),
            std::string::npos)
      << distrt_last_error();
  EXPECT_FALSE(distrt_is_initialized());
}

TEST(SelfRuntimeInit, CallsBeforeInitFail) {
  float a[1];
  EXPECT_EQ(distrt_all_reduce(0, a, a, 1, DISTRT_F32, DISTRT_SUM),
            DISTRT_ERR_STATE);
  EXPECT_NE(std::string(distrt_last_error()).find("not initialized"),
            std::string::npos);
  EXPECT_EQ(distrt_finalize(), DISTRT_ERR_STATE);
  EXPECT_EQ(distrt_progress(), DISTRT_ERR_STATE);
  EXPECT_NE(std::string(distrt_last_error()).find("distrt_progress"),
            std::string::npos);
}

TEST(SelfRuntimeInit, UnknownBackendAndBadTimeout) {
  setenv("DIST_BACKEND", "carrier-pigeon", 1);
  EXPECT_EQ(distrt_init(0), DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error()).find("unknown DIST_BACKEND"),
            std::string::npos);
  setenv("DIST_BACKEND", "self", 1);
  setenv("DIST_WATCHDOG_TIMEOUT_MS", "soon", 1);
  EXPECT_EQ(distrt_init(0), DISTRT_ERR_INVALID);
  unsetenv("DIST_WATCHDOG_TIMEOUT_MS");
  EXPECT_FALSE(distrt_is_initialized());
}

// Bad values were silently taken for "off" (or, for the timeout, saturated)
// and an unwritable trace failed only distrt_finalize, after the run.
TEST(SelfRuntimeInit, BadEnvironmentFailsInit) {
  setenv("DIST_BACKEND", "self", 1);
  struct Case {
    const char *name, *value, *message;
  } cases[] = {
      {"DIST_CHECK_COLLECTIVES", "yes",
       "distrt_init: invalid DIST_CHECK_COLLECTIVES 'yes' (expected 0 or 1)"},
      {"DIST_STATS", "garbage",
       "distrt_init: invalid DIST_STATS 'garbage' (expected 0 or 1)"},
      {"DIST_WATCHDOG_TIMEOUT_MS", "9223372036854775808",
       "distrt_init: invalid DIST_WATCHDOG_TIMEOUT_MS '9223372036854775808' "
       "(expected a whole number of milliseconds from 1 to "
       "9223372036854775807)"},
      {"DIST_TRACE", "/nonexistent-dir/t.json",
       "distrt: rank 0: distrt_init: invalid DIST_TRACE "
       "'/nonexistent-dir/t.json': cannot write the trace to "
       "'/nonexistent-dir/t.json': No such file or directory"},
  };
  for (const Case &c : cases) {
    setenv(c.name, c.value, 1);
    EXPECT_EQ(distrt_init(0), DISTRT_ERR_INVALID) << c.name;
    EXPECT_NE(std::string(distrt_last_error()).find(c.message),
              std::string::npos)
        << distrt_last_error();
    EXPECT_FALSE(distrt_is_initialized());
    unsetenv(c.name);
  }
  ASSERT_EQ(distrt_init(0), DISTRT_OK) << distrt_last_error();
  EXPECT_EQ(distrt_finalize(), DISTRT_OK) << distrt_last_error();
}

// The collective check is on by default; on NCCL (device buffers) it cannot
// run, and asking for it there fails init before any backend starts.
TEST(SelfRuntimeInit, CollectiveCheckOnNcclIsRefused) {
  setenv("DIST_BACKEND", "nccl", 1);
  setenv("DIST_CHECK_COLLECTIVES", "1", 1);
  EXPECT_EQ(distrt_init(0), DISTRT_ERR_INVALID);
  EXPECT_NE(std::string(distrt_last_error())
                .find("distrt_init: DIST_CHECK_COLLECTIVES=1 is not available "
                      "on the nccl backend"),
            std::string::npos)
      << distrt_last_error();
  EXPECT_FALSE(distrt_is_initialized());
  unsetenv("DIST_CHECK_COLLECTIVES");
  setenv("DIST_BACKEND", "self", 1);
}

TEST(SelfRuntimeInit, TraceIsChromeJson) {
  std::string path = ::testing::TempDir() + "distrt_self_trace.json";
  std::remove(path.c_str());
  setenv("DIST_BACKEND", "self", 1);
  setenv("DIST_TRACE", path.c_str(), 1);
  ASSERT_EQ(distrt_init(1), DISTRT_OK);
  float a[16] = {}, b[16];
  distrt_handle h;
  ASSERT_EQ(distrt_all_reduce_async(0, a, b, 16, DISTRT_F32, DISTRT_SUM, &h),
            DISTRT_OK);
  ASSERT_EQ(distrt_wait(h), DISTRT_OK);
  ASSERT_EQ(distrt_all_gather(0, a, 16, b, 16, DISTRT_F32), DISTRT_OK);
  ASSERT_EQ(distrt_finalize(), DISTRT_OK) << distrt_last_error();
  unsetenv("DIST_TRACE");
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  EXPECT_EQ(json.rfind("{\"displayTimeUnit\"", 0), 0u);
  EXPECT_NE(
      json.find("\"name\": \"all_reduce\", \"cat\": \"dist\", \"ph\": \"X\""),
      std::string::npos);
  EXPECT_NE(json.find("\"bytes\": 64"), std::string::npos);
  EXPECT_NE(json.find("\"name\": \"wait\""), std::string::npos);
  EXPECT_NE(json.find("\"name\": \"all_gather\""), std::string::npos);
  EXPECT_EQ(json.substr(json.size() - 4), "\n]}\n");
}

} // namespace
