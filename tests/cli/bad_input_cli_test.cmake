# The CLI's bad-input table: every command line must exit non-zero, at once, with a message that
# names the bad value. Variables: QGEMM (the CLI), WORK (a scratch folder).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/not_yaml.yaml "name: x\nproblems: [\n")
file(WRITE ${WORK}/no_problems.yaml "name: x\nrepetitions: 3\n")
file(WRITE ${WORK}/bad_weight.yaml
     "name: x\nproblems:\n  - {m: [1], n: 64, k: 128, weight: int4/g0, act: bf16}\n")
file(WRITE ${WORK}/huge.yaml
     "name: x\nbackends: [cpu]\nproblems:\n  - {m: [1000000000], n: 1000000, k: 1024, weight: int8/channel, act: bf16}\n")

# Each case: the expected part of the message, then the arguments (a '|'-separated list).
set(cases
  "cannot read|report|does_not_exist.json"
  "not a JSON object|report|${WORK}/not_yaml.yaml"
  "--m, --n and --k must be positive|verify|--m|0|--n|64|--k|128|--weight|int4/g128"
  "--m, --n and --k must be positive|verify|--m|1|--n|-5|--k|128|--weight|int4/g128"
  "unknown weight type 'int9'|verify|--m|1|--n|64|--k|128|--weight|int9/g128"
  "unknown activation type 'foo'|verify|--m|1|--n|64|--k|128|--weight|int4/g128|--act|foo"
  "--out int8 is not supported|verify|--m|1|--n|64|--k|128|--weight|int4/g128|--out|int8"
  "unknown backend 'tpu'|verify|--m|1|--n|64|--k|128|--weight|int4/g128|--backend|tpu"
  "needs --topk|verify|--m|1|--n|64|--k|128|--weight|int4/g128|--experts|4"
  "--topk needs --experts|verify|--m|1|--n|64|--k|128|--weight|int4/g128|--topk|2"
  "--layout sorted is not supported|verify|--m|1|--n|64|--k|128|--weight|int4/g128|--experts|4|--topk|2|--layout|sorted"
  "--layout needs --experts|verify|--m|1|--n|64|--k|128|--weight|int4/g128|--layout|masked"
  "--topk applies to the routed layout|verify|--m|1|--n|64|--k|128|--weight|int4/g128|--experts|4|--topk|2|--layout|masked"
  "--reduce applies to the routed layout|verify|--m|1|--n|64|--k|128|--weight|int4/g128|--experts|4|--layout|contiguous|--reduce"
  "of host memory|verify|--m|99999999|--n|8192|--k|8192|--weight|int4/g128/bf16"
  "does not fit in 64 bits|verify|--m|999999999999|--n|999999999|--k|8192|--weight|int4/g128"
  "not a multiple of the group size 128|verify|--m|1|--n|64|--k|200|--weight|int4/g128"
  "unknown device preset 'sm_99'|plan|--n|64|--k|128|--weight|int4/g128|--arch|sm_99"
  "--m takes positive token counts|plan|--n|64|--k|128|--weight|int4/g128|--m|0"
  "--n and --k must be positive|plan|--n|0|--k|128|--weight|int4/g128"
  "needs --topk in 1..4|plan|--n|64|--k|128|--weight|int4/g128|--arch|sm_90a|--experts|4|--topk|9"
  "--max-kernels must be at least 1|tune|--n|64|--k|128|--weight|int4/g128|--max-kernels|0"
  "unknown part 'q'|tune|--n|64|--k|128|--weight|int4/g128|--m|1|--tiles|w4x1 q"
  "of host memory|tune|--n|8192|--k|8192|--weight|int4/g128|--m|100000000"
  "does not exist|bench|${WORK}/missing.yaml"
  "not_yaml.yaml|bench|${WORK}/not_yaml.yaml"
  "no_problems.yaml|bench|${WORK}/no_problems.yaml"
  "'g0'|bench|${WORK}/bad_weight.yaml"
  "of host memory|bench|${WORK}/huge.yaml"
  "unknown number type 'foo'|formats|--dump|foo"
  "no config.json|inspect|${WORK}/missing_checkpoint"
  "--checkpoint needs --layer|verify|--m|1|--checkpoint|${WORK}"
  "--layer needs --checkpoint|verify|--m|1|--layer|model.layers.0.mlp.up_proj"
  "--weight is required|verify|--m|1|--n|64|--k|128"
  "leave out --weight|verify|--m|1|--checkpoint|${WORK}|--layer|x|--weight|int4/g128"
  "no config.json|verify|--m|1|--checkpoint|${WORK}/missing_checkpoint|--layer|x"
  "'sm_12' is not a supported target|jit|check|--arch|sm_12"
  "unknown model 'llama'|moe|--model|llama"
  "--tokens 0: each count must be at least 1|moe|--model|deepseek-v3|--tokens|1,0"
  "unknown weight type 'int9'|moe|--model|gpt-oss-120b|--weight|int9/g32"
)
set(failures "")
list(LENGTH cases count)
foreach(c IN LISTS cases)
  string(REPLACE "|" ";" parts "${c}")
  list(POP_FRONT parts expected)
  execute_process(COMMAND ${QGEMM} ${parts} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 20)
  string(FIND "${out}${err}" "${expected}" at)
  if(rc EQUAL 0 OR at EQUAL -1)
    string(APPEND failures "qgemm ${parts}: exit ${rc}, expected '${expected}' in:\n${out}${err}\n")
  endif()
endforeach()
if(failures)
  message(FATAL_ERROR "${failures}")
endif()
message(STATUS "${count} bad command lines, each a clear error")
