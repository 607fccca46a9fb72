#!/bin/sh
# Interestingness test of test/Tools/dist-reduce.mlir: a candidate is
# interesting (exit 1, mlir-reduce's convention; 0 means not) while
# `dist-opt -dist-insert-grad-sync` still refuses its gradient sync as
# averaged twice. $DIST_OPT names the dist-opt to run. The candidate file is
# the last argument (mlir-reduce puts any -test-arg before it).
for candidate; do :; done
if [ ! -x "${DIST_OPT:-}" ]; then
  echo "dist-reduce-double-average.sh: DIST_OPT='${DIST_OPT:-}' is not an executable dist-opt" >&2
  exit 0
fi
if "$DIST_OPT" "$candidate" -dist-insert-grad-sync -o /dev/null 2>&1 |
    grep -q "is not a recognized gradient sync: expected a sum all_reduce over the parameter's axes, but found an avg all_reduce"; then
  exit 1
fi
exit 0
