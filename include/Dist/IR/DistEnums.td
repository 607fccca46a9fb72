//===- DistEnums.td - dist dialect enums ----*- tablegen -*-===//

#ifndef DIST_IR_DISTENUMS_TD
#define DIST_IR_DISTENUMS_TD

include "Dist/IR/DistDialect.td"
include "mlir/IR/EnumAttr.td"

def Dist_ReductionKind : I32EnumAttr<"ReductionKind",
    "how a collective combines the contributions of the ranks", [
  I32EnumAttrCase<"Sum", 0, "sum">,
  I32EnumAttrCase<"Avg", 1, "avg">,
  I32EnumAttrCase<"Max", 2, "max">,
  I32EnumAttrCase<"Min", 3, "min">,
  I32EnumAttrCase<"Prod", 4, "prod">
]> {
  let cppNamespace = "::mlir::dist";
}

def Dist_SyncKind : I32EnumAttr<"SyncKind",
    "how a parameter is held across the ranks of its process group", [
  // Every rank holds the whole parameter (DDP).
  I32EnumAttrCase<"Replicated", 0, "replicated">,
  // Every rank holds a 1/W slice along dim 0 (FSDP / ZeRO).
  I32EnumAttrCase<"FullySharded", 1, "fully_sharded">
]> {
  let cppNamespace = "::mlir::dist";
}

def Dist_GradSyncPhase : I32EnumAttr<"GradSyncPhase",
    "which part of a parameter's gradient sync a dist.grad_sync performs", [
  // Pre-averaging and every stage: the local gradient to the synced one.
  I32EnumAttrCase<"Full", 0, "full">,
  // Pre-averaging and the stage on the parameter's `axes` (for HSDP the
  // intra-node reduce-scatter): what a partial no_sync still communicates.
  I32EnumAttrCase<"Shard", 1, "shard">,
  // The stage on `replicate_axes` (for HSDP the inter-node all-reduce).
  I32EnumAttrCase<"Replicate", 2, "replicate">
]> {
  let cppNamespace = "::mlir::dist";
}

def Dist_GradSyncScale : I32EnumAttr<"GradSyncScale",
    "whether a dist.grad_sync averages over the ranks or only sums", [
  // (1/W) sum_ranks grad: each rank's loss is averaged over its own batch.
  I32EnumAttrCase<"Mean", 0, "mean">,
  // sum_ranks grad: the frontend averaged the loss over the global batch
  // (what upstream shard-partition and a plain sum all-reduce assume).
  I32EnumAttrCase<"Sum", 1, "sum">
]> {
  let cppNamespace = "::mlir::dist";
}

def Dist_StashPoint : I32EnumAttr<"StashPoint",
    "what a parameter's no_sync micro-batches hold in its stash", [
  // The local gradient, unsharded: no communication until the sync step
  // (the full no_sync).
  I32EnumAttrCase<"Local", 0, "local">,
  // The pre-averaged shard after the sync's first stage (HSDP partial
  // no_sync: the intra-node reduce-scatter still runs each micro-batch).
  I32EnumAttrCase<"Shard", 1, "shard">,
  // The synchronized gradient: the sync runs each micro-batch, as without
  // no_sync, and the stash accumulates its result (the least memory).
  I32EnumAttrCase<"Synced", 2, "synced">
]> {
  let cppNamespace = "::mlir::dist";
}

#endif // DIST_IR_DISTENUMS_TD
