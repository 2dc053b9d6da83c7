# The CLI end to end on the CPU backend, on any machine: `qgemm bench smoke.yaml --backend cpu`
# writes a valid report and a plot, and `qgemm verify --checkpoint` runs a checkpoint's layer (a
# GPTQ act-order layer with a bias, the safetensors fuzz seed) against the reference.
# Run by CTest with -DQGEMM=<cli> -DRECIPE=<smoke.yaml> -DGPTQ_LAYER=<file> -DWORK=<dir>.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(
  COMMAND ${QGEMM} bench ${RECIPE} --backend cpu --out ${WORK}/smoke.json --plot ${WORK}/smoke.svg
  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "qgemm bench exited with ${rc}\n${stdout}\n${stderr}")
endif()
file(READ ${WORK}/smoke.json report)
string(JSON schema GET "${report}" schema)
if(NOT schema STREQUAL "qgemm-bench/1")
  message(FATAL_ERROR "unexpected schema '${schema}'")
endif()
string(JSON rows LENGTH "${report}" results)
if(rows LESS 12)
  message(FATAL_ERROR "expected at least 12 result rows, got ${rows}")
endif()
math(EXPR last "${rows} - 1")
set(timed 0)
foreach(i RANGE ${last})
  string(JSON backend GET "${report}" results ${i} backend)
  string(JSON status GET "${report}" results ${i} status)
  if(NOT backend STREQUAL "cpu")
    message(FATAL_ERROR "row ${i}: backend ${backend} ran although --backend cpu was given")
  endif()
  if(NOT status STREQUAL "ok")
    message(FATAL_ERROR "row ${i}: status ${status}")
  endif()
  string(JSON median GET "${report}" results ${i} median_us)
  if(median LESS_EQUAL 0)
    message(FATAL_ERROR "row ${i}: median_us ${median} is not positive")
  endif()
  math(EXPR timed "${timed} + 1")
endforeach()
file(READ ${WORK}/smoke.svg svg LIMIT 200)
if(NOT svg MATCHES "<svg")
  message(FATAL_ERROR "smoke.svg is not an SVG document")
endif()
message(STATUS "bench smoke: ${timed} cpu rows timed, report and plot written")

# The grid summary of a report: the smoke report's cpu rows have no cuBLAS ratio (a clear
# error); the committed H200 results summarize, with a heat map.
execute_process(COMMAND ${QGEMM} report ${WORK}/smoke.json --backend cpu
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(rc EQUAL 0 OR NOT stderr MATCHES "has no 'cpu' rows")
  message(FATAL_ERROR "qgemm report on cpu rows exited with ${rc}\n${stdout}\n${stderr}")
endif()
execute_process(
  COMMAND ${QGEMM} report ${SOURCE}/bench/results/h200/dense_w4a16.json --svg ${WORK}/grid.svg
  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
file(READ ${WORK}/grid.svg grid)
if(NOT rc EQUAL 0 OR NOT stdout MATCHES "int4/g128/bf16 x bf16" OR NOT stdout MATCHES "cliffs"
   OR NOT grid MATCHES "<svg")
  message(FATAL_ERROR "qgemm report exited with ${rc}\n${stdout}\n${stderr}")
endif()

# Grouped calls in the contiguous and masked layouts check the rows they write against the
# reference, and that the others keep the poison.
foreach(layout contiguous masked)
  execute_process(
    COMMAND ${QGEMM} verify --weight int4/g128/bf16 --experts 4 --layout ${layout} --m 37 --n 200
            --k 256 --backend cpu
    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0 OR NOT stdout MATCHES "MoE E=4 ${layout}" OR NOT stdout MATCHES "result     PASS")
    message(FATAL_ERROR "qgemm verify --layout ${layout} exited with ${rc}\n${stdout}\n${stderr}")
  endif()
endforeach()

# A checkpoint directory around the GPTQ layer: verify finds it, reads it and passes.
file(MAKE_DIRECTORY ${WORK}/checkpoint)
file(COPY_FILE ${GPTQ_LAYER} ${WORK}/checkpoint/model.safetensors)
file(WRITE ${WORK}/checkpoint/config.json [=[{"quantization_config": {"quant_method": "gptq",
  "bits": 4, "group_size": 16, "desc_act": true}}]=])
execute_process(
  COMMAND ${QGEMM} verify --checkpoint ${WORK}/checkpoint --layer l --m 5 --backend cpu
  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT rc EQUAL 0 OR NOT stdout MATCHES "act-order" OR NOT stdout MATCHES "uint4/g16/fp16/zp"
   OR NOT stdout MATCHES "result     PASS")
  message(FATAL_ERROR "qgemm verify --checkpoint exited with ${rc}\n${stdout}\n${stderr}")
endif()

# inspect plans the act-order layer for a described Hopper with the tiles Linear runs it on:
# at 1-2 tokens the decode tile staging the rows itself, after them its weights copied early
# (the gather kernel before the GEMM lets it start early).
execute_process(
  COMMAND ${QGEMM} inspect ${WORK}/checkpoint --arch sm_90a --m 1,3
  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT rc EQUAL 0 OR NOT stdout MATCHES "act-order" OR NOT stdout MATCHES "M=1 +dense_mma .* rows2x32"
   OR NOT stdout MATCHES "M=3 +dense_mma .* early")
  message(FATAL_ERROR "qgemm inspect --arch sm_90a exited with ${rc}\n${stdout}\n${stderr}")
endif()

# inspect --load builds the layers on GPU 0; without a GPU it says why and fails.
execute_process(
  COMMAND ${QGEMM} inspect ${WORK}/checkpoint --load
  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT (rc EQUAL 0 AND stdout MATCHES "loaded +1 layers")
   AND NOT (rc EQUAL 2 AND stderr MATCHES "qgemm inspect --load: .+"))
  message(FATAL_ERROR "qgemm inspect --load exited with ${rc}\n${stdout}\n${stderr}")
endif()

# The plan of a layer with 8-bit activations: the dense_act8 tile per M (token tiles above 128
# by the cost model), no GPU needed.
execute_process(
  COMMAND ${QGEMM} plan --arch h200 --n 8192 --k 8192 --weight e4m3/channel/fp32 --act e4m3/token
          --m 1,4096
  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT rc EQUAL 0 OR NOT stdout MATCHES "M=1 +dense_act8 e4m3 w:channel a:token n8 "
   OR NOT stdout MATCHES "M=4096 +dense_act8 e4m3 w:channel a:token n192 .*cy2")
  message(FATAL_ERROR "qgemm plan --act e4m3/token exited with ${rc}\n${stdout}\n${stderr}")
endif()

# The plan of an expert stack: the gathered tile per rows per expert, no GPU needed.
execute_process(
  COMMAND ${QGEMM} plan --arch sm_90a --n 4096 --k 14336 --weight int4/g128/bf16 --experts 8
          --topk 2 --m 1,4096
  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT rc EQUAL 0 OR NOT stdout MATCHES "M=1 +1 rows per expert hit: .* moe sm_90a"
   OR NOT stdout MATCHES "M=4096 +1024 rows per expert hit: .* ws .* tma moe sorted sm_90a")
  message(FATAL_ERROR "qgemm plan --experts exited with ${rc}\n${stdout}\n${stderr}")
endif()

# A grouped pair without 8-bit tiles (W4A8) plans its widened weight-only tiles, not dense_act8's.
execute_process(
  COMMAND ${QGEMM} plan --arch sm_90a --n 4096 --k 7168 --weight int4/g128/bf16 --act e4m3/token
          --experts 256 --topk 8 --m 1,4096
  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT rc EQUAL 0 OR NOT stdout MATCHES "activations widened to bf16"
   OR NOT stdout MATCHES "M=4096 +128 rows per expert hit: int4/g128:bf16 bf16->bf16 .* tma moe sorted sm_90a"
   OR stdout MATCHES "e4m3 w:")
  message(FATAL_ERROR "qgemm plan --experts --act e4m3/token exited with ${rc}\n${stdout}\n${stderr}")
endif()
