"""dist's PyTorch front door: trace a training step, emit it as a dist
module, run it with no_sync under mpirun and check it against PyTorch's own
DistributedDataParallel (python/README.md)."""

from .emit import emit_module
from .mlir import EmitError
from .placement import Mesh, Placement, parse_spec, preset
from .trace import TracedStep, trace_step

__all__ = ["EmitError", "Mesh", "Placement", "TracedStep", "emit_module", "parse_spec",
           "preset", "trace_step"]
