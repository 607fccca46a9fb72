//===- InitFinalize.cpp - init, one collective, finalize ------------------===//
//
// What lowered code does, each call through distrt_check: the program for
// the tests of what distrt_init makes of the environment (DIST_*).
//
//===----------------------------------------------------------------------===//

#include "dist_runtime/dist_runtime.h"

int main() {
  distrt_check(distrt_init(0));
  float one = 1, sum = 0;
  distrt_check(distrt_all_reduce(0, &one, &sum, 1, DISTRT_F32, DISTRT_SUM));
  distrt_check(distrt_finalize());
  return 0;
}
