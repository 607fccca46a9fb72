//===- MpiCollectivesTest.cpp - the runtime under mpirun ------------------===//
//
// Run as `mpirun -np N MpiCollectivesTest` (N = 2 and 4 in ctest). Every rank
// runs every test; only rank 0 prints gtest's report, and the exit code is
// the same on every rank (failures are summed over the world).
//
//===----------------------------------------------------------------------===//

#include "TestValues.h"
#include "dist_runtime/dist_runtime.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace testvalues;

namespace {

int rank() { return int(distrt_rank()); }
int world() { return int(distrt_world_size()); }

using Bytes = std::vector<unsigned char>;

TEST(Mpi, BackendAndWorld) {
  EXPECT_STREQ(distrt_backend_name(), "mpi");
  EXPECT_GE(world(), 2);
}

// Every op x dtype x reduction against values computed in TestValues.h.
TEST(Mpi, AllReduceEveryDtypeAndReduction) {
  const int64_t n = 13;
  for (distrt_dtype t : kDtypes)
    for (distrt_reduction op : kReductions) {
      Bytes send(n * sizeOf(t)), recv(n * sizeOf(t));
      for (int64_t i = 0; i < n; ++i)
        store(send.data(), i, t, input(rank(), i, op));
      ASSERT_EQ(distrt_all_reduce(0, send.data(), recv.data(), n, t, op),
                DISTRT_OK)
          << distrt_last_error();
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(load(recv.data(), i, t), reduced(world(), i, op, t))
            << "dtype " << t << " op " << op << " element " << i;
      // In place.
      ASSERT_EQ(distrt_all_reduce(0, send.data(), send.data(), n, t, op),
                DISTRT_OK)
          << distrt_last_error();
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(load(send.data(), i, t), reduced(world(), i, op, t));
    }
}

TEST(Mpi, ReduceScatterEveryDtypeAndReduction) {
  const int64_t block = 5;
  for (distrt_dtype t : kDtypes)
    for (distrt_reduction op : kReductions) {
      int64_t n = block * world();
      Bytes send(n * sizeOf(t)), recv(block * sizeOf(t));
      for (int64_t i = 0; i < n; ++i)
        store(send.data(), i, t, input(rank(), i, op));
      ASSERT_EQ(
          distrt_reduce_scatter(0, send.data(), n, recv.data(), block, t, op),
          DISTRT_OK)
          << distrt_last_error();
      for (int64_t i = 0; i < block; ++i)
        ASSERT_EQ(load(recv.data(), i, t),
                  reduced(world(), rank() * block + i, op, t))
            << "dtype " << t << " op " << op << " element " << i;
    }
}

TEST(Mpi, AllGatherEveryDtype) {
  const int64_t n = 6;
  for (distrt_dtype t : kDtypes) {
    Bytes send(n * sizeOf(t)), recv(n * world() * sizeOf(t));
    for (int64_t i = 0; i < n; ++i)
      store(send.data(), i, t, input(rank(), i, DISTRT_SUM));
    ASSERT_EQ(distrt_all_gather(0, send.data(), n, recv.data(), n * world(), t),
              DISTRT_OK)
        << distrt_last_error();
    for (int r = 0; r < world(); ++r)
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(load(recv.data(), r * n + i, t), input(r, i, DISTRT_SUM))
            << "dtype " << t << " block " << r;
  }
}

TEST(Mpi, TwoCollectivesInFlightWaitedInReverse) {
  std::vector<float> a(1 << 16, float(rank() + 1)), ra(a.size());
  std::vector<double> b(1000, rank()), gathered(1000 * world());
  distrt_handle h1, h2;
  ASSERT_EQ(distrt_all_reduce_async(0, a.data(), ra.data(), a.size(),
                                    DISTRT_F32, DISTRT_SUM, &h1),
            DISTRT_OK);
  ASSERT_EQ(distrt_all_gather_async(0, b.data(), b.size(), gathered.data(),
                                    gathered.size(), DISTRT_F64, &h2),
            DISTRT_OK);
  EXPECT_NE(h1, h2);
  ASSERT_EQ(distrt_wait(h2), DISTRT_OK) << distrt_last_error();
  ASSERT_EQ(distrt_wait(h1), DISTRT_OK) << distrt_last_error();
  float expected = float(world() * (world() + 1) / 2);
  EXPECT_EQ(ra.front(), expected);
  EXPECT_EQ(ra.back(), expected);
  for (int r = 0; r < world(); ++r)
    EXPECT_EQ(gathered[r * 1000 + 999], double(r));
}

TEST(Mpi, TestPollsUntilDone) {
  std::vector<int64_t> a(64, 1), b(64);
  distrt_handle h;
  ASSERT_EQ(distrt_all_reduce_async(0, a.data(), b.data(), 64, DISTRT_I64,
                                    DISTRT_SUM, &h),
            DISTRT_OK);
  int32_t done = 0;
  while (!done)
    ASSERT_EQ(distrt_test(h, &done), DISTRT_OK) << distrt_last_error();
  ASSERT_EQ(distrt_wait(h), DISTRT_OK);
  EXPECT_EQ(b[63], world());
}

// distrt_progress alone moves collectives in flight: their results are in
// place before anything tests or waits on them (OpenMPI's non-blocking
// collectives would otherwise not move before the wait; with a no-op
// distrt_progress this test fails at its deadline). The handles must still
// be waited on, and the results stay right.
TEST(Mpi, ProgressAloneMovesCollectivesInFlight) {
  const size_t n = size_t(1) << 18; // 1 MiB of f32: several libnbc rounds
  std::vector<float> a(n, float(rank() + 1)), ra(n, 0.0f);
  std::vector<float> s(n * world()), rs(n, 0.0f);
  for (size_t i = 0; i < s.size(); ++i)
    s[i] = float(i % 7);
  distrt_handle h1, h2;
  ASSERT_EQ(distrt_all_reduce_async(0, a.data(), ra.data(), n, DISTRT_F32,
                                    DISTRT_SUM, &h1),
            DISTRT_OK)
      << distrt_last_error();
  ASSERT_EQ(distrt_reduce_scatter_async(0, s.data(), s.size(), rs.data(), n,
                                        DISTRT_F32, DISTRT_SUM, &h2),
            DISTRT_OK)
      << distrt_last_error();
  const float sum = float(world() * (world() + 1) / 2);
  auto arrived = [&] {
    // Sampled elements; the results land only inside MPI calls, here those
    // of distrt_progress.
    for (size_t i = 0; i < n; i += 4099)
      if (ra[i] != sum || rs[i] != float((rank() * n + i) % 7) * world())
        return false;
    return ra[n - 1] == sum;
  };
  int64_t calls = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!arrived() && std::chrono::steady_clock::now() < deadline) {
    ASSERT_EQ(distrt_progress(), DISTRT_OK) << distrt_last_error();
    ++calls;
  }
  EXPECT_TRUE(arrived()) << "after " << calls << " distrt_progress calls";
  // This rank's schedule may still have sends for a peer to take: the ops
  // complete a little later.
  for (int32_t done1 = 0, done2 = 0; !done1 || !done2;) {
    ASSERT_EQ(distrt_progress(), DISTRT_OK) << distrt_last_error();
    ASSERT_EQ(distrt_test(h1, &done1), DISTRT_OK) << distrt_last_error();
    ASSERT_EQ(distrt_test(h2, &done2), DISTRT_OK) << distrt_last_error();
  }
  ASSERT_EQ(distrt_wait(h2), DISTRT_OK) << distrt_last_error();
  ASSERT_EQ(distrt_wait(h1), DISTRT_OK) << distrt_last_error();
  EXPECT_TRUE(arrived());
  EXPECT_EQ(distrt_wait(h1), DISTRT_ERR_INVALID);
  // Nothing in flight: a no-op.
  EXPECT_EQ(distrt_progress(), DISTRT_OK);
}

// Many ops in flight at once, of sizes that complete in another order than
// issued: distrt_progress (one MPI_Testsome) must mark exactly those that
// completed. An op marked complete too early would be waited on without
// MPI_Wait and read before its data arrived.
TEST(Mpi, ProgressMarksEachOfManyOpsInFlight) {
  const int ops = 48;
  std::vector<std::vector<int32_t>> in(ops), out(ops);
  std::vector<distrt_handle> handles(ops);
  for (int k = 0; k < ops; ++k) {
    size_t n = k % 3 == 0 ? (size_t(1) << 16) + k : 16 + k;
    in[k].assign(n, rank() + k);
    out[k].assign(n, -1);
    ASSERT_EQ(distrt_all_reduce_async(0, in[k].data(), out[k].data(), n,
                                      DISTRT_I32, DISTRT_SUM, &handles[k]),
              DISTRT_OK)
        << distrt_last_error();
  }
  std::vector<int32_t> done(ops, 0);
  for (int round = 0; round < 200; ++round) {
    ASSERT_EQ(distrt_progress(), DISTRT_OK) << distrt_last_error();
    // distrt_test of a marked op answers from the runtime's record; check
    // the data of every op the runtime says is done.
    for (int k = 0; k < ops; ++k) {
      ASSERT_EQ(distrt_test(handles[k], &done[k]), DISTRT_OK);
      if (done[k])
        EXPECT_EQ(out[k].back(), world() * (world() - 1) / 2 + world() * k)
            << "op " << k << " marked complete before its data arrived";
    }
  }
  for (int k = ops - 1; k >= 0; --k) {
    ASSERT_EQ(distrt_wait(handles[k]), DISTRT_OK) << distrt_last_error();
    int32_t expected = world() * (world() - 1) / 2 + world() * k;
    EXPECT_EQ(out[k].front(), expected) << "op " << k;
    EXPECT_EQ(out[k].back(), expected) << "op " << k;
  }
}

// An emulated AVG divides once, whether progress or the wait completes it.
TEST(Mpi, ProgressCompletesAvgOnce) {
  std::vector<double> a(4096, double(rank() + 1)), r(a.size());
  distrt_handle h;
  ASSERT_EQ(distrt_all_reduce_async(0, a.data(), r.data(), a.size(), DISTRT_F64,
                                    DISTRT_AVG, &h),
            DISTRT_OK);
  int32_t done = 0;
  while (!done) {
    ASSERT_EQ(distrt_progress(), DISTRT_OK) << distrt_last_error();
    ASSERT_EQ(distrt_progress(), DISTRT_OK) << distrt_last_error();
    ASSERT_EQ(distrt_test(h, &done), DISTRT_OK) << distrt_last_error();
  }
  ASSERT_EQ(distrt_wait(h), DISTRT_OK);
  EXPECT_EQ(r[4095], double(world() + 1) / 2);
}

// HSDP-style groups on a [2, W/2] mesh: ranks of one "node" share axis 0.
TEST(Mpi, SubgroupsAlongMeshAxes) {
  if (world() % 2)
    GTEST_SKIP() << "needs an even world size";
  int64_t shape[2] = {2, world() / 2};
  int64_t shardAxis[1] = {1}, replicateAxis[1] = {0};
  distrt_group shard, replicate, all;
  ASSERT_EQ(distrt_group_create(2, shape, 1, shardAxis, &shard), DISTRT_OK)
      << distrt_last_error();
  ASSERT_EQ(distrt_group_create(2, shape, 1, replicateAxis, &replicate),
            DISTRT_OK);
  ASSERT_EQ(distrt_group_create(2, shape, 0, nullptr, &all), DISTRT_OK);
  int64_t size, groupRank;
  ASSERT_EQ(distrt_group_size(shard, &size), DISTRT_OK);
  EXPECT_EQ(size, world() / 2);
  ASSERT_EQ(distrt_group_rank(shard, &groupRank), DISTRT_OK);
  EXPECT_EQ(groupRank, rank() % (world() / 2));
  ASSERT_EQ(distrt_group_size(replicate, &size), DISTRT_OK);
  EXPECT_EQ(size, 2);
  ASSERT_EQ(distrt_group_rank(replicate, &groupRank), DISTRT_OK);
  EXPECT_EQ(groupRank, rank() / (world() / 2));
  ASSERT_EQ(distrt_group_size(all, &size), DISTRT_OK);
  EXPECT_EQ(size, world());

  // Sum of world ranks within the node, then across nodes.
  int64_t mine = rank(), node = 0, total = 0;
  ASSERT_EQ(distrt_all_reduce(shard, &mine, &node, 1, DISTRT_I64, DISTRT_SUM),
            DISTRT_OK);
  int64_t half = world() / 2, first = (rank() / half) * half;
  EXPECT_EQ(node, half * first + half * (half - 1) / 2);
  ASSERT_EQ(
      distrt_all_reduce(replicate, &node, &total, 1, DISTRT_I64, DISTRT_SUM),
      DISTRT_OK);
  EXPECT_EQ(total, int64_t(world()) * (world() - 1) / 2);

  // Reduce-scatter inside the node: rank i of the node gets block i.
  std::vector<float> grad(4 * half, 1.0f), shardOut(4);
  ASSERT_EQ(distrt_reduce_scatter(shard, grad.data(), grad.size(),
                                  shardOut.data(), 4, DISTRT_F32, DISTRT_AVG),
            DISTRT_OK);
  EXPECT_EQ(shardOut[3], 1.0f);
}

// A kept gather: the first call of a window gathers every rank's shard, the
// others communicate nothing and return the same; a release makes the next
// window gather the updated shards.
TEST(Mpi, KeptGatherOncePerWindow) {
  const int n = 3;
  distrt_stats before, after;
  ASSERT_EQ(distrt_get_stats(&before), DISTRT_OK);
  for (int window = 0; window < 3; ++window) {
    std::vector<float> shard(n), full(n * world());
    for (int i = 0; i < n; ++i)
      shard[i] = float(100 * window + 10 * rank() + i);
    for (int use = 0; use < 3; ++use) {
      std::fill(full.begin(), full.end(), -1.0f);
      ASSERT_EQ(distrt_kept_gather("layer.w", 0, shard.data(), n, full.data(),
                                   full.size(), DISTRT_F32, 1),
                DISTRT_OK)
          << distrt_last_error();
      for (int r = 0; r < world(); ++r)
        for (int i = 0; i < n; ++i)
          EXPECT_EQ(full[r * n + i], float(100 * window + 10 * r + i))
              << "window " << window << " use " << use;
      // Changed shards are not read again inside the window.
      shard[0] = -7;
    }
    ASSERT_EQ(distrt_kept_release("layer.w"), DISTRT_OK);
  }
  ASSERT_EQ(distrt_get_stats(&after), DISTRT_OK);
  EXPECT_EQ(after.calls[DISTRT_KIND_ALL_GATHER] -
                before.calls[DISTRT_KIND_ALL_GATHER],
            3);
  EXPECT_EQ(after.kept_hits - before.kept_hits, 6);
  EXPECT_EQ(after.kept_hit_bytes - before.kept_hit_bytes, 6 * n * world() * 4);
  EXPECT_EQ(after.kept_bytes, 0);
}

// Several windows of gradient accumulation through the stash, with the sync
// step communicating (stash + g) / W once per window.
TEST(Mpi, StashAcrossWindows) {
  const int k = 4, n = 8;
  for (int window = 0; window < 3; ++window) {
    std::vector<float> g(n), synced(n);
    for (int step = 0; step < k - 1; ++step) {
      for (int i = 0; i < n; ++i)
        g[i] = float(rank() + step + window + i);
      ASSERT_EQ(distrt_stash_add("fc.weight", g.data(), n, DISTRT_F32),
                DISTRT_OK);
    }
    EXPECT_EQ(distrt_stash_bytes(), n * 4);
    std::vector<float> acc(n);
    ASSERT_EQ(distrt_stash_take("fc.weight", acc.data(), n, DISTRT_F32),
              DISTRT_OK);
    EXPECT_EQ(distrt_stash_bytes(), 0);
    for (int i = 0; i < n; ++i)
      acc[i] += float(rank() + (k - 1) + window + i);
    ASSERT_EQ(distrt_all_reduce(0, acc.data(), synced.data(), n, DISTRT_F32,
                                DISTRT_AVG),
              DISTRT_OK);
    for (int i = 0; i < n; ++i) {
      double expected = 0;
      for (int r = 0; r < world(); ++r)
        for (int step = 0; step < k; ++step)
          expected += r + step + window + i;
      EXPECT_DOUBLE_EQ(synced[i], expected / world()) << "window " << window;
    }
  }
}

// Many windows with a random K each (the same on every rank): the stash is
// consumed exactly once per window, so the optimizer-visible gradient equals
// the reference every window, never with a window lost or counted twice.
TEST(Mpi, RandomWindowsNeitherLoseNorDoubleGradients) {
  const int n = 16;
  uint64_t state = 12345; // same sequence on every rank
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return int(state >> 33);
  };
  for (int window = 0; window < 50; ++window) {
    int k = 1 + next() % 8;
    std::vector<float> g(n), acc(n), synced(n);
    for (int step = 0; step < k - 1; ++step) {
      for (int i = 0; i < n; ++i)
        g[i] = float((rank() + 1) * (step + 1) + i + window);
      ASSERT_EQ(distrt_stash_add("p", g.data(), n, DISTRT_F32), DISTRT_OK);
    }
    ASSERT_EQ(distrt_stash_take("p", acc.data(), n, DISTRT_F32), DISTRT_OK);
    for (int i = 0; i < n; ++i)
      acc[i] += float((rank() + 1) * k + i + window);
    ASSERT_EQ(distrt_all_reduce(0, acc.data(), synced.data(), n, DISTRT_F32,
                                DISTRT_SUM),
              DISTRT_OK);
    ASSERT_EQ(distrt_stash_bytes(), 0) << "window " << window;
    for (int i = 0; i < n; ++i) {
      double expected = 0;
      for (int r = 0; r < world(); ++r)
        for (int step = 0; step < k; ++step)
          expected += (r + 1) * (step + 1) + i + window;
      ASSERT_EQ(synced[i], float(expected))
          << "window " << window << " K " << k;
    }
  }
}

TEST(Mpi, StatsCountOneRoundPerCall) {
  distrt_reset_stats();
  std::vector<float> a(256, 1), b(256), c(256 * world());
  ASSERT_EQ(
      distrt_all_reduce(0, a.data(), b.data(), 256, DISTRT_F32, DISTRT_SUM),
      DISTRT_OK);
  ASSERT_EQ(distrt_all_gather(0, a.data(), 256, c.data(), c.size(), DISTRT_F32),
            DISTRT_OK);
  ASSERT_EQ(distrt_reduce_scatter(0, c.data(), c.size(), a.data(), 256,
                                  DISTRT_F32, DISTRT_SUM),
            DISTRT_OK);
  distrt_stats s;
  ASSERT_EQ(distrt_get_stats(&s), DISTRT_OK);
  EXPECT_EQ(s.calls[DISTRT_KIND_ALL_REDUCE], 1);
  EXPECT_EQ(s.bytes[DISTRT_KIND_ALL_REDUCE], 1024);
  EXPECT_EQ(s.calls[DISTRT_KIND_ALL_GATHER], 1);
  EXPECT_EQ(s.bytes[DISTRT_KIND_ALL_GATHER], 1024 * world());
  EXPECT_EQ(s.calls[DISTRT_KIND_REDUCE_SCATTER], 1);
  EXPECT_EQ(s.bytes[DISTRT_KIND_REDUCE_SCATTER], 1024 * world());
  EXPECT_EQ(s.waits, 3);
}

TEST(Mpi, ErrorsNameRankOpAndSizes) {
  std::vector<float> a(10), b(10);
  EXPECT_EQ(distrt_reduce_scatter(0, a.data(), 10, b.data(), 3, DISTRT_F32,
                                  DISTRT_SUM),
            DISTRT_ERR_INVALID);
  std::string expected = "distrt: rank " + std::to_string(rank()) +
                         ": reduce_scatter on group 0 (size " +
                         std::to_string(world()) +
                         "): send buffer of 10 elements and receive buffer of "
                         "3 elements do not match a group of " +
                         std::to_string(world()) + " ranks";
  EXPECT_NE(std::string(distrt_last_error()).find(expected), std::string::npos)
      << distrt_last_error();
  int64_t shape[1] = {world() + 1};
  distrt_group g;
  EXPECT_EQ(distrt_group_create(1, shape, 0, nullptr, &g), DISTRT_ERR_INVALID);
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string trace = ::testing::TempDir() + "distrt_mpi_trace.json";
  if (distrt_init(0) != DISTRT_OK) {
    std::fprintf(stderr, "%s\n", distrt_last_error());
    return 1;
  }
  if (distrt_rank() != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0;
  int64_t mine = failed, total = 0;
  distrt_all_reduce(0, &mine, &total, 1, DISTRT_I64, DISTRT_SUM);
  if (distrt_finalize() != DISTRT_OK) {
    std::fprintf(stderr, "%s\n", distrt_last_error());
    return 1;
  }
  return total ? 1 : 0;
}
