// A transform script that runs dist's no_sync pipeline, with options, on
// the payload module: upstream's transform.apply_registered_pass finds
// dist's registered pipelines and passes by name.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %m = transform.apply_registered_pass "dist-no-sync-pipeline"
        with options = { "keep-gathered" = true } to %root
        : (!transform.any_op) -> !transform.any_op
    transform.yield
  }

  // The same with a stash budget too small for the step's first stash.
  transform.named_sequence @too_small(%root: !transform.any_op {transform.consumed}) {
    %m = transform.apply_registered_pass "dist-no-sync-pipeline"
        with options = { "stash-budget" = "1" } to %root
        : (!transform.any_op) -> !transform.any_op
    transform.yield
  }

  // A module pass given a function: refused by the interpreter.
  transform.named_sequence @on_function(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %g = transform.apply_registered_pass "apply-no-sync" to %f
        : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
