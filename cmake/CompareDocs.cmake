# Fails when docs/Dist/ differs from the docs generated from the .td files.
# Usage: cmake -DGENERATED=<dir> -DCHECKED_IN=<dir> -P CompareDocs.cmake
file(GLOB generated RELATIVE ${GENERATED} ${GENERATED}/*.md)
if(NOT generated)
  message(FATAL_ERROR "no generated docs in ${GENERATED}: build the mlir-doc target")
endif()
set(stale)
foreach(doc ${generated})
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files
    ${GENERATED}/${doc} ${CHECKED_IN}/${doc} RESULT_VARIABLE differs)
  if(differs)
    list(APPEND stale ${doc})
  endif()
endforeach()
if(stale)
  message(FATAL_ERROR "docs/Dist is stale for: ${stale}; run `ninja -C build dist-doc` and commit")
endif()
message(STATUS "docs/Dist matches the .td files (${generated})")
