# -*- Python -*-
import os
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "DIST"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes_dirs = ["consumer"]
config.excludes = ["Inputs", "consumer", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dist_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%dist_src_root", config.dist_src_root))
config.substitutions.append(("%dist_obj_root", config.dist_obj_root))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%mlir_cmake_dir", config.mlir_cmake_dir))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP", "ASAN_OPTIONS",
                                     "UBSAN_OPTIONS", "LSAN_OPTIONS"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.dist_tools_dir, config.llvm_tools_dir]
tools = ["dist-opt", "dist-lsp-server", "dist-reduce", "mlir-opt", "mlir-translate", "llvm-nm",
         "llvm-readelf"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
# The C program of test/CAPI, on libDistCAPI.so.
config.substitutions.append(
    ("%dist_capi_test", os.path.join(config.dist_tools_dir, "dist-capi-test")))
dist_run = os.path.join(config.dist_tools_dir, "dist-run")
dist_torch = os.path.join(config.dist_tools_dir, "dist-torch")
if config.dist_sanitizers:
    # ASan installs its own SEGV handler, which reports in its own words.
    config.available_features.add("sanitizers")
    # dist-run hosts LLVM's JIT: the slow unwinder the sanitizer script asks
    # for (to match OpenMPI's leaks to their suppressions) deadlocks in it,
    # as in mlir-runner below, so dist-run runs with the fast unwinder and
    # without leak checking (ASan and UBSan stay on). dist-torch's `train`
    # starts dist-run under mpirun with its own environment, so it gets the
    # same (test/Torch/CMakeLists.txt does this for the ctest runs).
    jit_env = "env ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 LSAN_OPTIONS="
    dist_run = f"{jit_env} {dist_run}"
    dist_torch = f"{jit_env} {dist_torch}"
# A command word, not part of a path such as %t (".../dist-run.mlir.tmp").
config.substitutions.append((r"(?<![\w/.-])dist-run(?![\w/.-])", dist_run))

lib_dir = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
config.substitutions.append(
    ("%mlir_runner_utils", os.path.join(lib_dir, "libmlir_runner_utils.so")))
config.substitutions.append(
    ("%mlir_c_runner_utils", os.path.join(lib_dir, "libmlir_c_runner_utils.so")))
config.substitutions.append(
    ("%dist_runtime", os.path.join(config.dist_obj_root, "lib", "libdist_runtime.so")))
# Linking a lowered step ahead of time (clang, MLIR's runner utilities, the
# runtime), as cmake/DistToyStep.cmake does.
config.substitutions.append(("%mlir_lib_dir", lib_dir))
config.substitutions.append(("%clang", os.path.join(config.llvm_tools_dir, "clang")))
config.substitutions.append(("%dist_lib_dir", os.path.join(config.dist_obj_root, "lib")))
# tools/dist-plugin: dist as a dialect and pass plugin of a stock mlir-opt.
config.substitutions.append(
    ("%dist_plugin", os.path.join(config.dist_obj_root, "lib", "DistPlugin" + config.llvm_shlib_ext)))

# Integration tests declare what they need with `REQUIRES:`.
# numpy: Debian's python3-numpy lives under /usr/bin/python3, which a python3
# earlier on PATH (the one running lit) may lack.
for python in [sys.executable, "/usr/bin/python3"]:
    if os.path.exists(python) and subprocess.run(
            [python, "-c", "import numpy"], capture_output=True).returncode == 0:
        config.available_features.add("numpy")
        config.substitutions.append(("%numpy_python", python))
        break
# torch: Debian's python3-torch, which the PyTorch front door (build/bin/
# dist-torch, on /usr/bin/python3) traces with.
if subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                  capture_output=True).returncode == 0:
    config.available_features.add("torch")
config.substitutions.append(("%dist_torch", dist_torch))
# The no_sync pipeline's record of its options on the module
# (dist.no_sync_pipeline): dropped where a test compares the programs that
# two option sets give.
config.substitutions.append(
    ("%drop_pipeline_record",
     "sed -e 's/ attributes {dist.no_sync_pipeline = \"[^\"]*\"}//'"))
mpirun = shutil.which("mpirun")
if mpirun:
    config.available_features.add("mpi")
    flags = " --oversubscribe --bind-to none"
    if os.geteuid() == 0:
        flags += " --allow-run-as-root"
    config.substitutions.append(("%mpirun", mpirun + flags))

# CI (.ci/run) sets DIST_REQUIRE_ALL_TIERS=1: a tier that cannot run there
# (no mpirun, no numpy or torch under /usr/bin/python3) fails the suite
# instead of leaving its tests UNSUPPORTED.
if os.environ.get("DIST_REQUIRE_ALL_TIERS") == "1":
    missing = [f for f in ("mpi", "numpy", "torch")
               if f not in config.available_features]
    if missing:
        lit_config.fatal("DIST_REQUIRE_ALL_TIERS=1: the tier(s) %s cannot run "
                         "here (scripts/install-deps.sh installs them)"
                         % ", ".join(missing))
if config.dist_sanitizers:
    # Under -DDIST_ENABLE_SANITIZERS=ON the runtime mlir-runner loads is
    # instrumented, mlir-runner (upstream, uninstrumented) is not: preload
    # the sanitizer runtime. Leak checking is off in that process only, since
    # LLVM tools exit without freeing by design; the runtime's own leak
    # checks run in its gtests and the parity drivers. The slow unwinder the
    # sanitizer script asks for (LSAN_OPTIONS) deadlocks in mlir-runner's
    # JIT, so it is cleared here.
    preload = (f"env LD_PRELOAD={config.dist_asan_runtime} "
               "ASAN_OPTIONS=detect_leaks=0 LSAN_OPTIONS=")
    runner = os.path.join(config.llvm_tools_dir, "mlir-runner")
    config.substitutions.append(
        (r"(?<![\w/.-])mlir-runner(?![\w/.-])", f"{preload} {runner}"))
    # The same for an ahead-of-time step linked against the runtime, and for
    # an upstream tool that loads the instrumented DistPlugin.so.
    config.substitutions.append(("%aot_env", preload))
    config.substitutions.append(("%plugin_env", preload))
else:
    llvm_config.add_tool_substitutions(["mlir-runner"], [config.llvm_tools_dir])
    config.substitutions.append(("%aot_env", ""))
    config.substitutions.append(("%plugin_env", ""))
# Sanitizer builds parse on the main thread (Dist/Support/InputGuard.h,
# runWithParserStack): a test that needs the parser's large stack raises the
# main stack's limit to it there.
config.substitutions.append(
    ("%parser_stack",
     "prlimit --stack=536870912 --" if config.dist_sanitizers else ""))
