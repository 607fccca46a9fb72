/*===- blas_calls.c - count and time a process's sgemm calls by shape -----===*
 *
 * An LD_PRELOAD library for bench/README.md section 12: it wraps
 * cblas_sgemm (what distrt_matmul calls) and sgemm_ (what PyTorch's
 * libblas.so.3 path calls), forwards each call to the BLAS loaded after it,
 * and keeps per shape the calls, their seconds and their FLOPs. With
 * BLAS_CALLS_OUT=PREFIX set, PREFIX.<pid> gets one line per shape
 * ("api transposes MxNxK calls seconds flops"), rewritten every 256 calls
 * and at exit, since PyTorch's rank processes leave by _exit.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include "preload_out.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  char shape[64];
  long calls;
  double seconds, flops;
} Entry;

static Entry entries[1024];
static int numEntries;
static long numCalls;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void dump(void) {
  FILE *f = openPreloadOut("BLAS_CALLS_OUT");
  if (!f)
    return;
  for (int i = 0; i < numEntries; ++i)
    fprintf(f, "%s %ld %.6f %.0f\n", entries[i].shape, entries[i].calls,
            entries[i].seconds, entries[i].flops);
  fclose(f);
}

__attribute__((destructor)) static void atExit(void) { dump(); }

static void record(const char *shape, double seconds, double flops) {
  int i = 0;
  while (i < numEntries && strcmp(entries[i].shape, shape) != 0)
    ++i;
  if (i == numEntries) {
    if (numEntries == (int)(sizeof entries / sizeof entries[0]))
      return;
    snprintf(entries[numEntries++].shape, sizeof entries[0].shape, "%s", shape);
  }
  entries[i].calls += 1;
  entries[i].seconds += seconds;
  entries[i].flops += flops;
  if (++numCalls % 256 == 0)
    dump();
}

/* The next definition of `name`: after this library, or in libblas.so.3
 * when the BLAS was loaded privately (dlopen without RTLD_GLOBAL). */
static void *next(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    void *blas = dlopen("libblas.so.3", RTLD_LAZY);
    f = blas ? dlsym(blas, name) : NULL;
  }
  if (!f) {
    fprintf(stderr, "blas_calls: no %s to forward to\n", name);
    abort();
  }
  return f;
}

typedef void CblasSgemm(int, int, int, int, int, int, float, const float *,
                        int, const float *, int, float, float *, int);
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta,
                 float *c, int ldc) {
  static CblasSgemm *real;
  if (!real)
    real = (CblasSgemm *)next("cblas_sgemm");
  double start = now();
  real(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  double seconds = now() - start;
  char shape[64];
  snprintf(shape, sizeof shape, "cblas o%d/t%d%d %dx%dx%d", order, ta, tb, m,
           n, k);
  record(shape, seconds, 2.0 * m * n * k);
}

typedef void Sgemm(const char *, const char *, const int *, const int *,
                   const int *, const float *, const float *, const int *,
                   const float *, const int *, const float *, float *,
                   const int *);
void sgemm_(const char *ta, const char *tb, const int *m, const int *n,
            const int *k, const float *alpha, const float *a, const int *lda,
            const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc) {
  static Sgemm *real;
  if (!real)
    real = (Sgemm *)next("sgemm_");
  double start = now();
  real(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  double seconds = now() - start;
  char shape[64];
  snprintf(shape, sizeof shape, "f77 %c%c %dx%dx%d", *ta, *tb, *m, *n, *k);
  record(shape, seconds, 2.0 * *m * *n * *k);
}
