# Installs the build tree into a scratch prefix, then builds and runs examples/consumer against
# the installed package (find_package(qgemm CONFIG)), as a user of the library would.
# Variables: BUILD (the build tree), SOURCE (the repository), WORK (a scratch folder).
file(REMOVE_RECURSE ${WORK})
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()
run_step("install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
run_step("configure the consumer" ${CMAKE_COMMAND} -S ${SOURCE}/examples/consumer
         -B ${WORK}/consumer -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_BUILD_TYPE=Release)
run_step("build the consumer" ${CMAKE_COMMAND} --build ${WORK}/consumer)
run_step("run the consumer" ${WORK}/consumer/qgemm_consumer)
message(STATUS "${step_output}")
if(NOT step_output MATCHES "rel. error .* \\(ok\\)")
  message(FATAL_ERROR "unexpected consumer output: ${step_output}")
endif()
