/* A C driver linking only the installed runtime. */
#include <dist_runtime/dist_runtime.h>
#include <stdio.h>

int main(void) {
  float x[4] = {1, 2, 3, 4}, y[4];
  distrt_check(distrt_init(1));
  distrt_check(distrt_all_reduce(0, x, y, 4, DISTRT_F32, DISTRT_SUM));
  printf("%s %g %g\n", distrt_backend_name(), y[0], y[3]);
  distrt_check(distrt_finalize());
  return 0;
}
