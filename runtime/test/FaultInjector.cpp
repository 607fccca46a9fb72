//===- FaultInjector.cpp - one rank misbehaves at a chosen stage ----------===//
//
// `FaultInjector FAULT [STAGE]` under mpirun. Every rank runs what a compiled
// step does: distrt_init, distrt_group_create of a group that is not the
// world (group 1), a blocking all_reduce on group 0, an async all_reduce on
// group 1 and its distrt_wait, distrt_finalize. Rank 1 misbehaves:
//   size      passes a different element count to the blocking all_reduce
//   kind      calls all_gather instead of the blocking all_reduce
//   absent    sleeps (300 s) on reaching STAGE: a rank that never arrives
//   stopped   stops itself (SIGSTOP) on reaching STAGE: alive, but frozen
//   killed    dies (SIGKILL) 1 s after reaching STAGE, when the others are
//             surely blocked there (before init nothing synchronizes them)
// STAGE, for absent, stopped and killed (default: collective):
//   before-init      before distrt_init (the others are in MPI_Init)
//   group-create     before distrt_group_create of group 1
//   collective       before the blocking all_reduce on group 0
//   wait             before the async all_reduce on group 1 (the others
//                    block in distrt_wait)
//   progress         before a second async all_reduce on group 1, which the
//                    others drive with distrt_progress between chunks of
//                    compute (as a compiled step does) until distrt_test
//                    says it is done: they never block, yet must not spin
//                    forever
//   before-finalize  before distrt_finalize
//   after-finalize   after distrt_finalize, before exiting
// Every surviving rank must exit non-zero with a message naming the stage
// and its rank, within the watchdog timeout; the test driver checks that.
// A rank that gets through prints "rank R: finalized" and exits 0, which is
// right after finalize: every rank's work is then complete.
//
//===----------------------------------------------------------------------===//

#include "dist_runtime/dist_runtime.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

/// In the order a job reaches them.
const char *const stages[] = {
    "before-init", "group-create",    "collective",    "wait",
    "progress",    "before-finalize", "after-finalize"};

/// The rank before distrt_init knows it: mpirun's environment.
bool faultyBeforeInit() {
  const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
  return rank && std::string(rank) == "1";
}

/// Rank 1 misbehaves as `fault` says on reaching `stage`.
void maybeFault(const std::string &fault, const std::string &stage,
                const char *here, bool faulty) {
  if (!faulty || stage != here)
    return;
  std::fprintf(stderr, "rank 1: injecting '%s' at %s\n", fault.c_str(), here);
  std::fflush(stderr);
  if (fault == "absent") {
    std::this_thread::sleep_for(std::chrono::seconds(300));
  } else if (fault == "stopped") {
    std::raise(SIGSTOP);
  } else if (fault == "killed") {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    std::raise(SIGKILL);
  }
}

} // namespace

int main(int argc, char **argv) {
  std::string fault = argc > 1 ? argv[1] : "";
  std::string stage = argc > 2 ? argv[2] : "collective";
  bool knownFault = fault == "size" || fault == "kind" || fault == "absent" ||
                    fault == "stopped" || fault == "killed";
  bool knownStage = false;
  for (const char *s : stages)
    knownStage |= stage == s;
  if (argc < 2 || argc > 3 || !knownFault || !knownStage ||
      ((fault == "size" || fault == "kind") && stage != "collective")) {
    std::fprintf(stderr,
                 "usage: FaultInjector size|kind\n"
                 "       FaultInjector absent|stopped|killed [before-init|"
                 "group-create|collective|wait|progress|before-finalize|"
                 "after-finalize]\n");
    return 2;
  }

  maybeFault(fault, stage, "before-init", faultyBeforeInit());
  distrt_check(distrt_init(0));
  bool faulty = distrt_rank() == 1;
  int64_t world = distrt_world_size();

  maybeFault(fault, stage, "group-create", faulty);
  const int64_t mesh[] = {world}, axes[] = {0};
  distrt_group group = 0;
  distrt_check(distrt_group_create(1, mesh, 1, axes, &group));

  std::vector<float> a(1 << 16, 1.0f), b(a.size() * world);
  maybeFault(fault, stage, "collective", faulty);
  if (faulty && fault == "size")
    distrt_check(distrt_all_reduce(0, a.data(), b.data(), a.size() / 2,
                                   DISTRT_F32, DISTRT_SUM));
  else if (faulty && fault == "kind")
    distrt_check(distrt_all_gather(0, a.data(), a.size(), b.data(), b.size(),
                                   DISTRT_F32));
  else
    distrt_check(distrt_all_reduce(0, a.data(), b.data(), a.size(), DISTRT_F32,
                                   DISTRT_SUM));

  maybeFault(fault, stage, "wait", faulty);
  distrt_handle handle;
  distrt_check(distrt_all_reduce_async(group, a.data(), b.data(), a.size(),
                                       DISTRT_F32, DISTRT_SUM, &handle));
  distrt_check(distrt_wait(handle));

  maybeFault(fault, stage, "progress", faulty);
  distrt_check(distrt_all_reduce_async(group, a.data(), b.data(), a.size(),
                                       DISTRT_F32, DISTRT_SUM, &handle));
  float x = 1.0f;
  for (int32_t done = 0; !done;) {
    for (int i = 0; i < 10000; ++i)
      x = x * 0.999f + 0.001f;
    distrt_check(distrt_progress());
    distrt_check(distrt_test(handle, &done));
  }
  distrt_check(distrt_wait(handle));
  if (x < 0)
    std::fprintf(stderr, "unreachable: %f\n", x);

  maybeFault(fault, stage, "before-finalize", faulty);
  int64_t rank = distrt_rank();
  distrt_check(distrt_finalize());
  std::fprintf(stderr, "rank %lld: finalized\n", (long long)rank);
  std::fflush(stderr);
  maybeFault(fault, stage, "after-finalize", rank == 1);
  return 0;
}
