# Installation: headers, the libraries and tools as the export set
# DistTargets, and the package files (DistConfig.cmake, its version file and
# DistTargets.cmake) under lib/cmake/dist.
#
# The libraries are declared with DISABLE_INSTALL, so that add_mlir_library
# does not also install them into MLIR's own export set: each file is
# installed once, from here. Their MLIR and LLVM link dependencies are the
# targets MLIRConfig.cmake defines (MLIR and LLVM when MLIR_LINK_MLIR_DYLIB,
# MLIRIR, ... otherwise); DistConfig.cmake finds MLIR first.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DIST_EXPORTED_LIBRARIES
  MLIRDistSupport MLIRDistRemarks MLIRDist MLIRDistAnalysis MLIRDistTransforms
  MLIRDistToRuntime
  MLIRShardToDist)
set(DIST_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dist)

# A package built with -DDIST_ENABLE_SANITIZERS=ON needs the sanitizer
# runtime in every executable that links it (clang: -shared-libsan).
if(DIST_ENABLE_SANITIZERS)
  foreach(target ${DIST_EXPORTED_LIBRARIES} dist_runtime DistCAPI)
    target_link_options(${target} INTERFACE
      -fsanitize=address,undefined -shared-libsan
      -Wl,-rpath,${DIST_ASAN_RUNTIME_DIR})
  endforeach()
endif()

install(DIRECTORY include/Dist DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/Dist
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc" PATTERN "CMakeFiles" EXCLUDE)
install(DIRECTORY runtime/include/dist_runtime
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(TARGETS ${DIST_EXPORTED_LIBRARIES} EXPORT DistTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS dist_runtime EXPORT DistTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The NCCL backend is a module the runtime loads by name, not linked.
if(TARGET dist_runtime_nccl)
  install(TARGETS dist_runtime_nccl LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
# Installed tools and libraries find libMLIR/libLLVM where they were linked
# from, as the build tree's do, and the runtime beside them ($ORIGIN/../lib).
set_target_properties(dist-opt dist-run dist-lsp-server dist-reduce DistCAPI
  DistPlugin PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS dist-opt dist-run EXPORT DistTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(EXPORT DistTargets NAMESPACE Dist:: DESTINATION ${DIST_INSTALL_CMAKE_DIR})
configure_package_config_file(cmake/DistConfig.cmake.in
  ${PROJECT_BINARY_DIR}/DistConfig.cmake
  INSTALL_DESTINATION ${DIST_INSTALL_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a minor version may break the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/DistConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/DistConfig.cmake
  ${PROJECT_BINARY_DIR}/DistConfigVersion.cmake
  DESTINATION ${DIST_INSTALL_CMAKE_DIR})

# The embedding surface beyond C++ (README "Embedding dist"): the C API
# (headers and libDistCAPI.so, exported as Dist::DistCAPI), the tools for
# editors and reduction, and the mlir-opt plugin (a module, loaded by path).
install(DIRECTORY include/Dist-c DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/Dist-c/Version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/Dist-c)
install(TARGETS DistCAPI EXPORT DistTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS dist-lsp-server dist-reduce EXPORT DistTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS DistPlugin LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
