# dist_add_toy_step(<target> SOURCE <driver.cpp>
#                   MODE <ddp|zero2|zero3|hsdp|hsdp-partial> WORLD <ranks>
#                   [BUCKETS] [BUDGET <bytes>] [EXPECT_STASH <point> x4]
#                   [OPTIONS <pipeline options>...]
#                   [LOWER_OPTIONS <-dist-lower-to-llvm options>...]
#                   [GEN_ARGS <gen_toy.py args>...]
#                   [DEFINES <definitions>...])
#
# Generates the ToyModel step with examples/gen_toy.py, compiles it ahead of
# time (dist-opt --dist-no-sync-pipeline, --dist-lower-to-llvm, mlir-translate,
# clang -O3 -march=native; see docs/Design.md) and links it with <driver.cpp>, the step
# runner (lib/Dist/StepRunner) and the runtime into bin/<target>. TOY_WORLD and
# TOY_MODE are defined for the driver, which includes ToyModel.h. Without
# BUCKETS the pipeline runs with bucket-cap-bytes=0: one collective per
# parameter, which the parity drivers count. OPTIONS are more options of
# -dist-no-sync-pipeline (e.g. schedule=false), LOWER_OPTIONS of
# -dist-lower-to-llvm (e.g. blas=false). BUDGET runs the pipeline with
# stash-budget=<bytes> (-dist-choose-stash picks each parameter's stash
# point). The points of the compiled stash ops (the comm report's
# `stashes`) are written to <target>.step/stash_points.h (TOY_STASH_POINTS, by
# tools/dist-toy-train/StashPoints.cmake), which the parity driver includes;
# EXPECT_STASH, the four points in argument order as worked out by hand,
# becomes TOY_EXPECTED_STASH_POINTS there, checked against them. The step is
# compiled for this machine's CPU (-march=native): these binaries are built
# and run in place.
#
# Not beside its tool in tools/dist-toy-train/: the parity drivers there and
# the step-throughput benchmark in bench/ both call it, so it is a project
# module here, included once by the top-level CMakeLists.txt.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
find_program(DIST_CLANG NAMES clang-22 clang HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED)
find_program(DIST_MLIR_TRANSLATE mlir-translate HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED)

function(dist_add_toy_step target)
  cmake_parse_arguments(ARG "BUCKETS" "SOURCE;MODE;WORLD;BUDGET"
                        "GEN_ARGS;DEFINES;OPTIONS;LOWER_OPTIONS;EXPECT_STASH" ${ARGN})
  set(mode_ids ddp 0 zero2 2 zero3 3 hsdp 4 hsdp-partial 4)
  list(FIND mode_ids ${ARG_MODE} at)
  if(at EQUAL -1)
    message(FATAL_ERROR "dist_add_toy_step: unknown MODE '${ARG_MODE}'")
  endif()
  math(EXPR at "${at} + 1")
  list(GET mode_ids ${at} mode_id)
  set(gen_mode ${ARG_MODE})
  set(options "")
  if(NOT ARG_BUCKETS)
    set(options "bucket-cap-bytes=0")
  endif()
  if(DEFINED ARG_BUDGET)
    set(options "stash-budget=${ARG_BUDGET} ${options}")
  endif()
  set(partial 0)
  if(ARG_MODE STREQUAL "hsdp-partial")
    set(gen_mode hsdp)
    set(options "hsdp-partial=true ${options}")
    set(partial 1)
  endif()
  list(JOIN ARG_EXPECT_STASH "," expect_stash)
  foreach(option ${ARG_OPTIONS})
    set(options "${options} ${option}")
  endforeach()
  string(STRIP "${options}" options)
  if(options STREQUAL "")
    set(pipeline --dist-no-sync-pipeline)
  else()
    set(pipeline "--dist-no-sync-pipeline=${options}")
  endif()
  set(lower --dist-lower-to-llvm)
  if(ARG_LOWER_OPTIONS)
    list(JOIN ARG_LOWER_OPTIONS " " lower_options)
    set(lower "--dist-lower-to-llvm=${lower_options}")
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${target}.step)
  add_custom_command(
    OUTPUT ${dir}/step.o ${dir}/stash_points.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/examples/gen_toy.py
            --mode ${gen_mode} --world ${ARG_WORLD} ${ARG_GEN_ARGS} > ${dir}/step.mlir
    COMMAND $<TARGET_FILE:dist-opt> ${dir}/step.mlir ${pipeline} -o ${dir}/step.window.mlir
    COMMAND $<TARGET_FILE:dist-opt> ${dir}/step.window.mlir
            "--dist-comm-report=format=json output=${dir}/report.json" -o /dev/null
    COMMAND ${CMAKE_COMMAND} -DINPUT=${dir}/report.json
            -DOUTPUT=${dir}/stash_points.h -DEXPECT=${expect_stash}
            -P ${PROJECT_SOURCE_DIR}/tools/dist-toy-train/StashPoints.cmake
    COMMAND $<TARGET_FILE:dist-opt> ${dir}/step.window.mlir ${lower}
            -o ${dir}/step.llvm.mlir
    COMMAND ${DIST_MLIR_TRANSLATE} --mlir-to-llvmir ${dir}/step.llvm.mlir -o ${dir}/step.ll
    COMMAND ${DIST_CLANG} -O3 -march=native -fPIC -Wno-override-module -c ${dir}/step.ll -o ${dir}/step.o
    DEPENDS dist-opt ${PROJECT_SOURCE_DIR}/examples/gen_toy.py
            ${PROJECT_SOURCE_DIR}/tools/dist-toy-train/StashPoints.cmake
    COMMENT "Compiling the ToyModel step for ${target}")
  add_executable(${target} ${ARG_SOURCE} ${dir}/step.o ${dir}/stash_points.h)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tools/dist-toy-train
                             ${dir})
  target_compile_definitions(${target} PRIVATE
    TOY_WORLD=${ARG_WORLD} TOY_MODE=${mode_id} TOY_HSDP_PARTIAL=${partial} ${ARG_DEFINES})
  # The lowered step may call MLIR's C runner utilities (memrefCopy, for a
  # copy between strided buffers: a bucket's per-rank blocks).
  target_link_libraries(${target} PRIVATE DistStepRunner dist_runtime
                        mlir_c_runner_utils m)
  llvm_update_compile_flags(${target})
  if(LLVM_LINK_LLVM_DYLIB)
    target_link_libraries(${target} PRIVATE LLVM)
  else()
    target_link_libraries(${target} PRIVATE LLVMSupport)
  endif()
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
endfunction()
