# Runs COMMAND (a ;-list) and passes only if it exits non-zero (EXPECT_RC
# when given), prints a line matching each regular expression of EXPECT (a
# ;-list), and ends within MAX_SECONDS (then it is killed, and the test
# fails as hung).
# cmake -DCOMMAND=... -DEXPECT=... -DMAX_SECONDS=... -P ExpectFailure.cmake
string(TIMESTAMP start "%s")
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT ${MAX_SECONDS})
string(TIMESTAMP end "%s")
math(EXPR elapsed "${end} - ${start}")
message(STATUS "exit: ${rc}, ${elapsed} s\n${out}${err}")
if(rc MATCHES "timeout")
  message(FATAL_ERROR "hung: still running after ${MAX_SECONDS} s")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "exited 0 although a rank misbehaved")
endif()
if(DEFINED EXPECT_RC AND NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "exited ${rc}, expected ${EXPECT_RC}")
endif()
foreach(pattern IN LISTS EXPECT)
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "no message matching '${pattern}'")
  endif()
endforeach()
