# Eight processes warm one kernel cache at once (as eight server processes starting together
# would), then a ninth finds every kernel cached and valid: no torn or missing entries, no crash.
# Variables: QGEMM (the CLI), RECIPE (a bench recipe), WORK (a scratch folder).
file(REMOVE_RECURSE ${WORK})
set(warm ${CMAKE_COMMAND} -E env QGEMM_CACHE_DIR=${WORK}/cache ${QGEMM} jit warm ${RECIPE}
    --arch sm_80)
file(MAKE_DIRECTORY ${WORK})
execute_process(
  COMMAND sh -c "pids=''; for i in 1 2 3 4 5 6 7 8; do \"$@\" > ${WORK}/warm$i.log 2>&1 & pids=\"$pids $!\"; done; failed=0; for p in $pids; do wait $p || failed=$((failed + 1)); done; exit $failed"
          warm ${warm}
  RESULT_VARIABLE failed TIMEOUT 600)
if(NOT failed EQUAL 0)
  file(READ ${WORK}/warm1.log log)
  message(FATAL_ERROR "${failed} of 8 concurrent warm-ups failed; the first one's log:\n${log}")
endif()
execute_process(COMMAND ${warm} RESULT_VARIABLE rc OUTPUT_VARIABLE again ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT again MATCHES "warmed ([0-9]+) kernels.*: 0 compiled, ([0-9]+) already cached, 0 failed")
  message(FATAL_ERROR "after the concurrent warm-ups, a ninth compiled or failed:\n${again}\n${err}")
endif()
set(kernels ${CMAKE_MATCH_1})
execute_process(COMMAND ${CMAKE_COMMAND} -E env QGEMM_CACHE_DIR=${WORK}/cache ${QGEMM} jit list
                OUTPUT_VARIABLE listing)
if(NOT listing MATCHES "${kernels} entries")
  message(FATAL_ERROR "the cache holds other than ${kernels} whole entries:\n${listing}")
endif()
# A write in progress is <key>.qkc.tmp.<pid>.<n> (kernel_cache.cpp): none may be left behind.
file(GLOB leftovers ${WORK}/cache/*.qkc.tmp.*)
if(leftovers)
  message(FATAL_ERROR "the concurrent warm-ups left temporaries behind: ${leftovers}")
endif()
message(STATUS "8 concurrent warm-ups left ${kernels} valid entries")
