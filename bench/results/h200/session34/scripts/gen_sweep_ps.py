# Random layers on the prescaled plans: bf16 in and out, 33..600 tokens, every integer and
# float code with group / block / channel scales, zero points, odd N, K a multiple of 768
# (whole groups of every spec, g48 too). Seed 3402.
import random
r = random.Random(3402)
weights = ["int4/g128/bf16", "uint4/g128/bf16/zp", "uint4/g64/fp16/zp", "int4/g32/fp16",
           "e2m1/g32/ue8m0", "e2m1/g16/e4m3/global", "int8/channel/bf16", "int8/g128/bf16",
           "uint8/g128/bf16/zp", "int2/g128/bf16", "uint2/g64/bf16/zp", "int3/g128/bf16",
           "int6/g128/fp16", "e4m3/b128x128/fp32", "e5m2/g128/bf16", "e3m2/g32/ue8m0",
           "int4/channel/fp16", "uint4/channel/bf16/zp", "int4/g256/bf16", "int4/g48/bf16",
           "int1/g64/bf16", "e2m3/g32/ue8m0", "int4/b128x128/fp32", "int5/g64/bf16"]
for i in range(80):
    w = r.choice(weights)
    m = r.choice([33, 40, 64, 65, 72, 96, 100, 127, 128, 129, 200, 256, 300, 384, 511, 512, 600])
    n = r.choice([r.randint(100, 3000), r.randint(3000, 12000), 8192, 4096, 333])
    k = 768 * r.randint(1, 14)
    bias = " --bias" if r.random() < 0.3 else ""
    print(f"--m {m} --n {n} --k {k} --weight {w} --act bf16 --out bf16 --check-rows 96{bias}")
