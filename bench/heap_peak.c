/*===- heap_peak.c - a process's live heap bytes and their peak, by phase -===*
 *
 * An LD_PRELOAD library for bench/README.md section 12: it wraps malloc,
 * calloc, realloc, free, posix_memalign, aligned_alloc and memalign (C++'s
 * operator new calls malloc), forwards each to glibc's own (__libc_*), and
 * keeps the bytes live (malloc_usable_size) and their peak. The same counts
 * for dist-run and for PyTorch, whatever either allocates through.
 *
 * A program marks phases by calling heap_peak_phase("label") if the
 * library is loaded (dist-run: a weak symbol; Python: ctypes): the phase
 * that ends is recorded, the new one starts with the peak reset to the
 * bytes live. With HEAP_PEAK_OUT=PREFIX set, PREFIX.<pid> gets one line per
 * label ("label phases live_at_start_max peak_max growth_max growth_min"):
 * over that label's phases, the most bytes live at a start, the highest
 * peak, and the most and least growth (peak minus start); rewritten at
 * every mark (PyTorch's rank processes leave by _exit).
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include "preload_out.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static long live, peak;

static void added(void *p) {
  if (!p)
    return;
  long now = __atomic_add_fetch(&live, (long)malloc_usable_size(p),
                                __ATOMIC_RELAXED);
  long old = __atomic_load_n(&peak, __ATOMIC_RELAXED);
  while (now > old && !__atomic_compare_exchange_n(&peak, &old, now, 1,
                                                    __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED))
    ;
}

static void removed(void *p) {
  if (p)
    __atomic_sub_fetch(&live, (long)malloc_usable_size(p), __ATOMIC_RELAXED);
}

void *malloc(size_t n) {
  void *p = __libc_malloc(n);
  added(p);
  return p;
}
void *calloc(size_t n, size_t size) {
  void *p = __libc_calloc(n, size);
  added(p);
  return p;
}
void *realloc(void *old, size_t n) {
  removed(old);
  void *p = __libc_realloc(old, n);
  if (p)
    added(p);
  else if (old && n) // failed: the old block is still live
    added(old);
  return p;
}
void free(void *p) {
  removed(p);
  __libc_free(p);
}
void *memalign(size_t alignment, size_t n) {
  void *p = __libc_memalign(alignment, n);
  added(p);
  return p;
}
void *aligned_alloc(size_t alignment, size_t n) {
  return memalign(alignment, n);
}
int posix_memalign(void **out, size_t alignment, size_t n) {
  if (alignment % sizeof(void *) || (alignment & (alignment - 1)))
    return EINVAL;
  void *p = memalign(alignment, n);
  if (!p && n)
    return ENOMEM;
  *out = p;
  return 0;
}

typedef struct {
  char label[32];
  long phases, liveAtStart, peak, growth, growthMin;
} Phase;

static Phase phases[16];
static int numPhases, current = -1;
static long currentStart;

static void dump(void) {
  FILE *f = openPreloadOut("HEAP_PEAK_OUT");
  if (!f)
    return;
  for (int i = 0; i < numPhases; ++i)
    fprintf(f, "%s %ld %ld %ld %ld %ld\n", phases[i].label, phases[i].phases,
            phases[i].liveAtStart, phases[i].peak, phases[i].growth,
            phases[i].growthMin);
  fclose(f);
}

/* Ends the phase under way (if any) and starts `label`'s. */
void heap_peak_phase(const char *label) {
  long now = __atomic_load_n(&live, __ATOMIC_RELAXED);
  if (current >= 0) {
    Phase *p = &phases[current];
    long top = __atomic_load_n(&peak, __ATOMIC_RELAXED);
    p->phases += 1;
    if (currentStart > p->liveAtStart)
      p->liveAtStart = currentStart;
    if (top > p->peak)
      p->peak = top;
    if (top - currentStart > p->growth)
      p->growth = top - currentStart;
    if (p->phases == 1 || top - currentStart < p->growthMin)
      p->growthMin = top - currentStart;
  }
  int i = 0;
  while (i < numPhases && strcmp(phases[i].label, label) != 0)
    ++i;
  if (i == numPhases && numPhases < (int)(sizeof phases / sizeof *phases)) {
    snprintf(phases[i].label, sizeof phases[i].label, "%s", label);
    ++numPhases;
  }
  current = i < numPhases ? i : -1;
  currentStart = now;
  __atomic_store_n(&peak, now, __ATOMIC_RELAXED);
  dump();
}
