import random, subprocess, sys
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1130)
ints = [f"int{b}" for b in range(1,9)]; uints = [f"uint{b}" for b in range(1,9)]
floats = ["e2m1","e2m3","e3m2","e4m3","e5m2"]
scale_types = ["fp16","bf16","fp32","e4m3","ue8m0"]
aliases = ["mxfp4","nvfp4","mxfp6_e2m3","mxfp6_e3m2","mxfp8","fp8_block","fp8_channel","int4/g128/fp16","uint4/g128/fp16/zp","int8/channel/bf16"]
def spec():
    if rng.random() < 0.15: 
        a = rng.choice(aliases); 
        g = {"mxfp4":32,"nvfp4":16,"mxfp6_e2m3":32,"mxfp6_e3m2":32,"mxfp8":32,"fp8_block":128,"fp8_channel":1}.get(a, 128 if "g128" in a else 1)
        return a, g
    t = rng.choice(ints+uints+floats)
    mode = rng.choice(["g16","g32","g64","g128","g128","g256","g512","g1024","channel","channel","b64x128","b128x128","tensor"])
    s = f"{t}/{mode}/{rng.choice(scale_types)}"
    if t.startswith("uint") and rng.random()<0.8:
        s += "/" + rng.choice(["zp","zp","zp_fp16","zp_bf16","zp_fp32"])
    if rng.random()<0.15: s += "/global"
    g = int(mode[1:]) if mode.startswith("g") else (int(mode.split("x")[1]) if mode.startswith("b") else 1)
    return s, g
out=[]; bad=set()
while len(out) < int(sys.argv[2]) if len(sys.argv) > 2 else 200:
    s, g = spec()
    if s in bad: continue
    k = g * rng.randint(1, max(1, 9000//g)) if g>1 else rng.randint(1,9000)
    n = rng.choice([rng.randint(1,100), rng.randint(100,3000), rng.randint(3000,12000), rng.choice([1,2,8,24,4096,14336])])
    m = rng.choice([1,2,4,6,8,10,15,24,40,48,96,127,130,250,384,385,511,600,1024,1500,2048,4096])
    act = rng.choice(["bf16","bf16","fp16","fp16","e4m3/token","int8/token","e4m3/g128/fp32"] )
    if "g128" in act and k % 128: act = "bf16"
    out_t = rng.choice(["bf16","fp16","fp16","bf16","fp32"])
    cmd = f"--m {m} --n {n} --k {k} --weight {s} --act {act} --out {out_t}" + (" --bias" if rng.random()<0.3 else "")
    r = subprocess.run(["/work/main/build-lead/qgemm","verify","--backend","cpu","--m","1","--n","8","--k",str(k),"--weight",s,"--act",act], capture_output=True, text=True)
    if r.returncode == 0: out.append(cmd)
    else:
        txt=(r.stdout+r.stderr)
        if "FAIL" in txt: print("CPU FAIL", cmd, txt[-400:], file=sys.stderr)
        else: bad.add(s); print("rejected", s, k, act, txt.strip().splitlines()[-1][:200], file=sys.stderr)
for c in out: print(c)
