"""How a process that ran a gloo rank of PyTorch DDP ends.

torch 1.13 (Debian's) can deadlock when a DistributedDataParallel and its
ProcessGroupGloo are destroyed: the main thread holds the GIL in
~Reducer -> ~ProcessGroupGloo, which joins the group's worker thread, while
that worker is freeing the last tensor of a finished collective and waits for
the GIL to drop the tensor's Python object. Seen in CI (torch-op-zoo-w2: rank 1
alive 600 s after its work was done) and in about one run in eight of the
oracle on two cores, with gdb showing exactly those two stacks.

So a rank never runs those destructors: once its results are written (files
closed, queues flushed) it leaves with os._exit, and a rank that failed prints
its traceback first. Nothing a rank produces is lost: every output is written
before `leave` is called."""

import os
import sys
import traceback


def leave(code: int = 0) -> None:
    """Ends this rank's process now, with `code`, skipping the destructors."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_rank(rank: int, body, *args) -> None:
    """Runs body(rank, *args) in a rank's process and leaves: 0 if it
    returned, 1 after printing its traceback if it raised (the parent sees
    the exit code; torch.multiprocessing's error queue is not used)."""
    try:
        body(rank, *args)
    except BaseException:
        sys.stderr.write("rank %d: %s" % (rank, traceback.format_exc()))
        leave(1)
    leave(0)
