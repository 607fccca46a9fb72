# -*- Python -*-
import os
import shutil
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "DIST"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dist_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%dist_src_root", config.dist_src_root))
config.substitutions.append(("%dist_obj_root", config.dist_obj_root))
config.substitutions.append(("%python", sys.executable))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.dist_tools_dir, config.llvm_tools_dir]
tools = ["dist-opt", "mlir-opt"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Integration tests declare what they need with `REQUIRES:`.
if shutil.which("mpirun"):
    config.available_features.add("mpi")
