"""Compiling and running a traced step: the module written to the run
directory, then `mpirun -np W dist-run step.mlir` on the directory's files
(dist-run checks every window against always-sync accumulation itself)."""

import os
import shlex
import shutil
import subprocess
import sys
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def find_dist_run(given: Optional[str] = None) -> str:
    """dist-run: `given`, $DIST_TORCH_DIST_RUN (the build's launcher sets
    it), build/bin beside the sources, or PATH."""
    env = os.environ.get("DIST_TORCH_DIST_RUN")
    for candidate in (given, env, os.path.join(ROOT, "build", "bin", "dist-run"),
                      shutil.which("dist-run")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit("dist-torch: cannot find dist-run (build dist first: "
                     "./scripts/build.sh, or pass --dist-run)")


def mpirun_command() -> List[str]:
    mpirun = os.environ.get("DIST_MPIRUN")
    if mpirun:
        return shlex.split(mpirun)
    cmd = [shutil.which("mpirun") or "mpirun", "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def run_dist(workdir: str, world: int, k: int, windows: int, lr: float,
             dist_run: str, extra: List[str], timeout: int = 1800) -> subprocess.CompletedProcess:
    out = os.path.join(workdir, "out")
    os.makedirs(out, exist_ok=True)
    cmd = mpirun_command() + ["-np", str(world), dist_run, os.path.join(workdir, "step.mlir"),
                              "--k", str(k), "--windows", str(windows), "--lr", repr(lr),
                              "--params-npy", os.path.join(workdir, "params"),
                              "--data-npy", os.path.join(workdir, "data"),
                              "--out-npy", out] + list(extra)
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("DIST_WATCHDOG_TIMEOUT_MS", "120000")
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout, env=env)


def relay(proc: subprocess.CompletedProcess, stream=sys.stdout, prefix: str = "") -> None:
    for line in proc.stdout.splitlines():
        stream.write(prefix + line + "\n")
