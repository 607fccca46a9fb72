//===- FaultInjector.cpp - one rank misbehaves in a collective ------------===//
//
// `FaultInjector MODE` under mpirun: rank 1 misbehaves, the others do an
// ordinary all_reduce. Modes:
//   absent    rank 1 never arrives (sleeps past the watchdog)
//   size      rank 1 passes a different element count
//   kind      rank 1 calls all_gather while the others all_reduce
//   killed    rank 1 dies (SIGKILL) while the others are in the collective
// Every surviving rank must exit non-zero with a message naming the op,
// within the watchdog timeout; the test driver checks that.
//
//===----------------------------------------------------------------------===//

#include "dist_runtime/dist_runtime.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: FaultInjector absent|size|kind|killed\n");
    return 2;
  }
  const char *mode = argv[1];
  distrt_check(distrt_init(0));
  std::vector<float> a(1 << 16, 1.0f), b(a.size() * distrt_world_size());
  bool faulty = distrt_rank() == 1;
  if (faulty && !std::strcmp(mode, "absent")) {
    std::this_thread::sleep_for(std::chrono::seconds(120));
  } else if (faulty && !std::strcmp(mode, "size")) {
    distrt_check(distrt_all_reduce(0, a.data(), b.data(), a.size() / 2,
                                   DISTRT_F32, DISTRT_SUM));
  } else if (faulty && !std::strcmp(mode, "kind")) {
    distrt_check(distrt_all_gather(0, a.data(), a.size(), b.data(), b.size(),
                                   DISTRT_F32));
  } else if (faulty && !std::strcmp(mode, "killed")) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::raise(SIGKILL);
  } else {
    distrt_check(distrt_all_reduce(0, a.data(), b.data(), a.size(), DISTRT_F32,
                                   DISTRT_SUM));
  }
  // Reaching here means the fault went unnoticed.
  std::fprintf(stderr, "rank %lld: the collective completed despite the fault\n",
               (long long)distrt_rank());
  distrt_finalize();
  return 0;
}
