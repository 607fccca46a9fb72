/*===- preload_out.h - the output file of bench's LD_PRELOAD libraries ----===*
 *
 * blas_calls.c and heap_peak.c write what they count to PREFIX.<pid>, PREFIX
 * from an environment variable, one file per process (ranks, spawned
 * workers), rewritten whole each time.
 *
 *===----------------------------------------------------------------------===*/

#ifndef DIST_BENCH_PRELOAD_OUT_H
#define DIST_BENCH_PRELOAD_OUT_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* PREFIX.<pid> opened for writing, PREFIX from `variable`; NULL when the
 * variable is unset or the file cannot be opened. */
static inline FILE *openPreloadOut(const char *variable) {
  const char *prefix = getenv(variable);
  if (!prefix)
    return NULL;
  char path[512];
  snprintf(path, sizeof path, "%s.%d", prefix, (int)getpid());
  return fopen(path, "w");
}

#endif /* DIST_BENCH_PRELOAD_OUT_H */
