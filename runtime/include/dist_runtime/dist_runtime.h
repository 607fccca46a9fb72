/*===- dist_runtime.h - the dist runtime C API ----------------------------===*
 *
 * The one public header of the runtime: called by code lowered from the
 * `dist` dialect (by symbol name) and by hand-written drivers. Every call
 * returns a status; on failure distrt_last_error() names the rank, the op,
 * the group and the sizes involved.
 *
 * Backends, chosen at distrt_init by DIST_BACKEND (auto | mpi | nccl | self):
 *   mpi   OpenMPI non-blocking collectives on host buffers (CPUs, clusters);
 *   nccl  NCCL on device buffers, ncclUniqueId shared over MPI, loaded from
 *         libdist_runtime_nccl.so next to this library;
 *   self  world size 1, in process.
 * auto picks mpi when launched by mpirun (or when MPI is already
 * initialized), else self.
 *
 * Environment: DIST_BACKEND (see above), DIST_WATCHDOG_TIMEOUT_MS,
 * DIST_CHECK_COLLECTIVES, DIST_TRACE, DIST_STATS, DIST_NCCL_PLUGIN, read by
 * distrt_init; docs/Runtime.md lists their accepted values and defaults. A
 * bad value makes distrt_init fail (DISTRT_ERR_INVALID).
 *
 * No hang: wherever a rank waits for its peers (distrt_init, group creation,
 * collectives, waits, distrt_finalize), waiting longer than
 * DIST_WATCHDOG_TIMEOUT_MS aborts the whole job with a message naming the
 * rank and where it waited (docs/Runtime.md).
 *
 * Layout: collectives work along dim 0 of contiguous row-major buffers, i.e.
 * on flat element ranges (rank i's part of an all_gather result or a
 * reduce_scatter input is the i-th contiguous block of `count` elements).
 * Another dim is handled by the caller (the lowering transposes it to dim 0
 * into a contiguous buffer and back).
 *===----------------------------------------------------------------------===*/

#ifndef DIST_RUNTIME_DIST_RUNTIME_H
#define DIST_RUNTIME_DIST_RUNTIME_H

#include <stdint.h>

#if defined(_WIN32)
#define DISTRT_EXPORT __declspec(dllexport)
#else
#define DISTRT_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t distrt_status;
enum {
  DISTRT_OK = 0,
  DISTRT_ERR_INVALID = 1,    /* bad argument: size, pointer, handle, group */
  DISTRT_ERR_STATE = 2,      /* not initialized, or initialized twice */
  DISTRT_ERR_BACKEND = 3,    /* MPI / NCCL / CUDA reported an error */
  DISTRT_ERR_UNAVAILABLE = 4 /* backend or device not present */
};

/* The exit status of a job the watchdog ended (DIST_WATCHDOG_TIMEOUT_MS):
 * sysexits' EX_TEMPFAIL, apart from timeout(1)'s 124 and a signal's 128+n,
 * so that a script can tell a peer that stopped answering from its own
 * time limit. */
#define DISTRT_EXIT_WATCHDOG 75

typedef enum {
  DISTRT_F32 = 0,
  DISTRT_F64 = 1,
  DISTRT_F16 = 2,
  DISTRT_BF16 = 3,
  DISTRT_I32 = 4,
  DISTRT_I64 = 5,
  /* Not a dtype: keeps the enum 32 bits wide in C and C++, so that an
   * out-of-range value a caller passes is rejected with DISTRT_ERR_INVALID
   * rather than being undefined behaviour in the C++ runtime (the
   * Vulkan *_MAX_ENUM convention). The same holds for distrt_reduction. */
  DISTRT_DTYPE_MAX_ENUM = 0x7fffffff
} distrt_dtype;

/* Same order as the dialect's ReductionKind. */
typedef enum {
  DISTRT_SUM = 0,
  DISTRT_AVG = 1,
  DISTRT_MAX = 2,
  DISTRT_MIN = 3,
  DISTRT_PROD = 4,
  DISTRT_REDUCTION_MAX_ENUM = 0x7fffffff /* not a reduction, see above */
} distrt_reduction;

/* Group 0 is the world. */
typedef int64_t distrt_group;
typedef int64_t distrt_handle;

/*--- lifetime --------------------------------------------------------------*/

/* Initializes the runtime. expected_world_size > 0 is the world size the
 * program was compiled for; a different launched size is an error. Waits
 * for every rank to start. */
DISTRT_EXPORT distrt_status distrt_init(int64_t expected_world_size);
/* Waits for every rank to reach it (a barrier), then ends the backend. */
DISTRT_EXPORT distrt_status distrt_finalize(void);
DISTRT_EXPORT int32_t distrt_is_initialized(void);
DISTRT_EXPORT int64_t distrt_rank(void);
DISTRT_EXPORT int64_t distrt_world_size(void);
/* "mpi", "nccl" or "self"; "" before init. */
DISTRT_EXPORT const char *distrt_backend_name(void);
/* The message of the last failed call on this thread ("" if none). */
DISTRT_EXPORT const char *distrt_last_error(void);
/* If status is not DISTRT_OK: prints distrt_last_error() to stderr and
 * aborts the whole job. Lowered code calls this after every runtime call. */
DISTRT_EXPORT void distrt_check(distrt_status status);
DISTRT_EXPORT void distrt_set_watchdog_timeout_ms(int64_t timeout_ms);

/*--- process groups --------------------------------------------------------*/

/* The group of ranks that differ from this one only along `axes` of a
 * row-major mesh of `mesh_shape` (whose product must be the world size).
 * naxes == 0 means all axes; `axes` must be strictly increasing (a group is
 * a set of axes; its ranks are in row-major order), and the product of the
 * extents must fit in int64. Collective over the world: every rank must call
 * it with the same arguments. Groups are cached: equal arguments give the
 * same id. */
DISTRT_EXPORT distrt_status distrt_group_create(int64_t mesh_rank,
                                                const int64_t *mesh_shape,
                                                int64_t naxes,
                                                const int64_t *axes,
                                                distrt_group *group);
DISTRT_EXPORT distrt_status distrt_group_size(distrt_group group,
                                              int64_t *size);
DISTRT_EXPORT distrt_status distrt_group_rank(distrt_group group,
                                              int64_t *rank);

/*--- collectives -----------------------------------------------------------*/

/* Both buffer sizes are passed in elements so that a mismatch with the group
 * size is an error, not memory corruption. */

/* recv (recv_count = send_count * W elements) = send of every rank, in group
 * rank order. */
DISTRT_EXPORT distrt_status distrt_all_gather_async(
    distrt_group group, const void *send, int64_t send_count, void *recv,
    int64_t recv_count, distrt_dtype dtype, distrt_handle *handle);
/* recv (recv_count elements) = block `group rank` of the reduction of every
 * rank's send (send_count = recv_count * W elements). */
DISTRT_EXPORT distrt_status distrt_reduce_scatter_async(
    distrt_group group, const void *send, int64_t send_count, void *recv,
    int64_t recv_count, distrt_dtype dtype, distrt_reduction op,
    distrt_handle *handle);
/* recv = the reduction of every rank's send (count elements each). send may
 * equal recv. */
DISTRT_EXPORT distrt_status distrt_all_reduce_async(
    distrt_group group, const void *send, void *recv, int64_t count,
    distrt_dtype dtype, distrt_reduction op, distrt_handle *handle);

/* Blocks until the collective is complete and releases the handle; a handle
 * is waited on once. */
DISTRT_EXPORT distrt_status distrt_wait(distrt_handle handle);
/* distrt_wait for compiled code, which passes the op's send buffer here so
 * that its own buffer analysis keeps that buffer unwritten while the
 * collective may still read it; it must be the pointer the op was issued
 * with (DISTRT_ERR_INVALID otherwise). */
DISTRT_EXPORT distrt_status distrt_wait_send(distrt_handle handle,
                                             const void *send);
/* *done = 1 when complete (the handle must still be waited on). */
DISTRT_EXPORT distrt_status distrt_test(distrt_handle handle, int32_t *done);
/* Lets every collective in flight advance without waiting for any: tests
 * each pending op of the backend (a handle whose op completes here must still
 * be waited on). OpenMPI's non-blocking collectives move only inside MPI
 * calls, so compiled code calls this between the compute ops that lie
 * between a collective's issue and its wait (docs/Design.md, "Progress").
 * A cheap no-op when nothing is in flight, and on the self backend; the NCCL
 * backend only queries its events. Fails (DISTRT_ERR_BACKEND, naming the op)
 * when a pending op failed; that op's handle is then released. */
DISTRT_EXPORT distrt_status distrt_progress(void);

/* Blocking forms: the result of the async call and its wait, through the
 * backend's blocking path (OpenMPI's blocking collectives use its tuned
 * algorithms, its non-blocking ones libnbc's, which are slower for small
 * messages). The watchdog covers them too. */
DISTRT_EXPORT distrt_status distrt_all_gather(distrt_group group,
                                              const void *send,
                                              int64_t send_count, void *recv,
                                              int64_t recv_count,
                                              distrt_dtype dtype);
DISTRT_EXPORT distrt_status distrt_reduce_scatter(
    distrt_group group, const void *send, int64_t send_count, void *recv,
    int64_t recv_count, distrt_dtype dtype, distrt_reduction op);
DISTRT_EXPORT distrt_status distrt_all_reduce(distrt_group group,
                                              const void *send, void *recv,
                                              int64_t count, distrt_dtype dtype,
                                              distrt_reduction op);

/*--- the gradient stash (host memory) ---------------------------------------*/

/* Adds `count` elements of data into the stash of `param`, creating it
 * zero-filled on first use. Later calls must use the same count and dtype. */
DISTRT_EXPORT distrt_status distrt_stash_add(const char *param,
                                             const void *data, int64_t count,
                                             distrt_dtype dtype);
/* Copies the stash of `param` into out without releasing it; *present = 0
 * (and out zero-filled) when there is none. */
DISTRT_EXPORT distrt_status distrt_stash_read(const char *param, void *out,
                                              int64_t count, distrt_dtype dtype,
                                              int32_t *present);
/* Copies the stash into out (zeros if none) and releases it. */
DISTRT_EXPORT distrt_status distrt_stash_take(const char *param, void *out,
                                              int64_t count,
                                              distrt_dtype dtype);
/* Bytes held by all stashes now. */
DISTRT_EXPORT int64_t distrt_stash_bytes(void);

/*--- kept gathered parameters (host memory) ---------------------------------*/

/* The gathered value of parameter `param` for the rest of an accumulation
 * window (-dist-keep-gathered). When this rank keeps a gather of `param`, it
 * is copied into recv and nothing is communicated; otherwise send is
 * all-gathered over `group` into recv (blocking, as distrt_all_gather) and,
 * when keep != 0, a copy is kept. A kept gather must be reused with the same
 * group, counts and dtype (DISTRT_ERR_INVALID otherwise, naming the rank,
 * the parameter and both shapes). Every rank of the group must make the same
 * sequence of calls, as for any collective. */
DISTRT_EXPORT distrt_status distrt_kept_gather(
    const char *param, distrt_group group, const void *send, int64_t send_count,
    void *recv, int64_t recv_count, distrt_dtype dtype, int32_t keep);
/* Drops the kept gather of `param`, if any. */
DISTRT_EXPORT distrt_status distrt_kept_release(const char *param);
/* Bytes held by all kept gathers now. */
DISTRT_EXPORT int64_t distrt_kept_bytes(void);

/*--- compute ----------------------------------------------------------------*/

/* C[n] += A[n] * B[n] for n < batch, where A[n] is rows x depth, B[n] depth x
 * cols and C[n] rows x cols, each operand given by its first element and its
 * element strides along (batch, row, column); f32 or f64. The contraction
 * kernel of lowered steps (-dist-outline-contractions): it calls the BLAS the
 * runtime was built with (distrt_matmul_blas) where each matrix is row- or
 * column-major and C overlaps neither input, and otherwise runs the op's own
 * loops in `loop_order`, which then also defines what an op whose C
 * overlaps an input computes: the roles of its loops, outermost first, one
 * per 4 bits from bit 0 (DISTRT_LOOP_BATCH, _ROW, _COL, _DEPTH), and their
 * count (3 or 4) in bits 16 to 19. DISTRT_MATMUL_OVERWRITE in `loop_order`
 * makes it C[n] = A[n] * B[n]: C is first set to zero, as a linalg.fill of
 * zero before the op would (BLAS's beta = 0: C's old values are not read).
 * Needs no distrt_init. */
enum {
  DISTRT_LOOP_BATCH = 0,
  DISTRT_LOOP_ROW = 1,
  DISTRT_LOOP_COL = 2,
  DISTRT_LOOP_DEPTH = 3
};
#define DISTRT_MATMUL_OVERWRITE (INT64_C(1) << 20)
DISTRT_EXPORT distrt_status distrt_matmul(
    distrt_dtype dtype, int64_t batch, int64_t rows, int64_t cols,
    int64_t depth, const void *a, int64_t a_batch_stride, int64_t a_row_stride,
    int64_t a_col_stride, const void *b, int64_t b_batch_stride,
    int64_t b_row_stride, int64_t b_col_stride, void *c,
    int64_t c_batch_stride, int64_t c_row_stride, int64_t c_col_stride,
    int64_t loop_order);
/* The BLAS distrt_matmul calls ("" when the runtime was built without one:
 * loops only). */
DISTRT_EXPORT const char *distrt_matmul_blas(void);

/*--- statistics
 * --------------------------------------------------------------*/

enum {
  DISTRT_KIND_ALL_GATHER = 0,
  DISTRT_KIND_REDUCE_SCATTER = 1,
  DISTRT_KIND_ALL_REDUCE = 2,
  DISTRT_NUM_KINDS = 3
};

typedef struct {
  /* Per collective kind: calls, and bytes in nccl-tests' convention (the
   * full array: the all_gather result, the reduce_scatter input). */
  int64_t calls[DISTRT_NUM_KINDS];
  int64_t bytes[DISTRT_NUM_KINDS];
  int64_t waits;
  int64_t stash_adds;
  int64_t stash_takes;
  int64_t stash_bytes;      /* held now */
  int64_t stash_peak_bytes; /* most held at once since the last reset */
  /* Kept gathers: calls answered from a kept buffer (all_gathers skipped)
   * and the bytes those all_gathers would have moved (the full array), the
   * releases, bytes held now and the most held at once since the last
   * reset. A call that gathers counts as an all_gather above. */
  int64_t kept_hits;
  int64_t kept_hit_bytes;
  int64_t kept_releases;
  int64_t kept_bytes;
  int64_t kept_peak_bytes;
} distrt_stats;

DISTRT_EXPORT distrt_status distrt_get_stats(distrt_stats *stats);
/* Zeroes the counters; stash_peak_bytes and kept_peak_bytes restart from
 * what is held now. */
DISTRT_EXPORT void distrt_reset_stats(void);
DISTRT_EXPORT void distrt_print_stats(void);

#ifdef __cplusplus
}
#endif

#endif /* DIST_RUNTIME_DIST_RUNTIME_H */
