// FINDING 12 — dist-run: misleading refusals (severity: bad-diagnostic)
//
// (a) Command:
//   dist-opt 12-dist-run-misleading-refusals.mlir -dist-no-sync-pipeline=no-sync-suffix=_acc -o acc.mlir
//   dist-run acc.mlir --windows 1
// What happens: exit 1 with
//   dist-run: the no_sync pipeline made no @step_no_sync: @step returns no gradient tied to a
//   dist.parameter (docs/Design.md)
// but @step does return a tied gradient (result #0, {dist.grad = @w}); it is already a sync step
// whose variant is @step_acc. The message sends the user looking for a missing tie. It also has
// no location. Expected: "@step already consumes the stash (a sync step) but the module has no
// @step_no_sync (found @step_acc?)", at @step.
//
// (b) Command: the same file with `func.func private @step` (no pipeline run first):
//   dist-run 12-dist-run-misleading-refusals-private.mlir --windows 1
// What happens: exit 1 with
//   dist-run: rank 0: calling @step_no_sync: Symbols not found: [ _mlir__mlir_ciface_step_no_sync ]
// (the lowering emits C interfaces only for public functions, so a private @step compiles and
// then cannot be called). Expected: a located error at @step saying the entry must be public.
dist.mesh @world shape = [1]
dist.parameter @w : tensor<4xf32> replicated on @world
func.func private @step(%p: tensor<4xf32> {dist.param = @w}, %x: tensor<4xf32>, %e: tensor<0xf32>) -> (tensor<4xf32> {dist.grad = @w}) {
  return %x : tensor<4xf32>
}
