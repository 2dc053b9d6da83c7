"""Random `qgemm verify` cases for the format sweeps of sessions 18-23, one argument line each.

    python3 scripts/gen_sweep.py PROFILE SEED COUNT > cmds.txt   (QGEMM_BIN: default build/qgemm)

Then run each line as `qgemm verify --backend jit <line>` on a GPU (falling back to `--backend
auto` where jit declines; bench/results/h200/session23/scripts/one.sh and call3.sh do that).
PROFILE `long` (session 23) draws K 8192..16384 at 1-32 tokens, where the long decode stages
apply. PROFILE `odd` (session 19) draws odd groups, float zero points and few-row layers.
PROFILE `turing` (session 20, run under QGEMM_TARGET_ARCH=sm_75) draws every weight format with
fp16 activations only (sm_75's jit takes fp16), N up to 9000, K up to 6000, M up to 2048.
PROFILE `small` made sweep 1 (seed 1130, 200 cases): N up to 8192, K up to 4000, M up to 1100,
bf16 / fp16 output. `wide` made sweeps 2 (seed 20261201, 230) and 3 (seed 777, 200): N up to
14336, K up to 9000, M up to 4096, fp32 output too; quantized activations (which run on the CPU
reference) capped at M = 64 and N = 2048, 96 sampled rows compared. Each weight spec is first
tried on the CPU backend at a tiny size: specs the grammar rejects are skipped (listed on
stderr), a CPU mismatch is reported. Sweep 1 also ran 17 MoE cases, listed in
format_sweep1.log.
"""
import os
import random
import subprocess
import sys

PROFILES = {
    "small": dict(
        k_max=4000, k_min=8,
        n=lambda r: r.choice([r.randint(1, 300), r.randint(300, 3000),
                              r.choice([4095, 5000, 1000, 777, 17, 8192])]),
        m=[1, 2, 3, 5, 7, 8, 9, 16, 17, 31, 32, 33, 63, 64, 65, 100, 118, 128, 129, 200, 256,
           257, 300, 512, 513, 700, 1000, 1100],
        out=["bf16", "fp16"], capped=False),
    "wide": dict(
        k_max=9000, k_min=1,
        n=lambda r: r.choice([r.randint(1, 100), r.randint(100, 3000), r.randint(3000, 12000),
                              r.choice([1, 2, 8, 24, 4096, 14336])]),
        m=[1, 2, 4, 6, 8, 10, 15, 24, 40, 48, 96, 127, 130, 250, 384, 385, 511, 600, 1024, 1500,
           2048, 4096],
        out=["bf16", "fp16", "fp16", "bf16", "fp32"], capped=True),
    # Session 19: groups that are multiples of 16 but no power of two (jit since then), float
    # zero points, and layers of few rows at 33..64 tokens (the kw2 bucket).
    "odd": dict(
        k_max=6000, k_min=8,
        n=lambda r: r.choice([r.randint(1, 600), r.randint(600, 4224), r.randint(4224, 9000)]),
        m=[1, 7, 16, 33, 40, 48, 57, 64, 64, 65, 100, 128, 129, 300, 1000],
        out=["bf16", "fp16", "fp32"], capped=True,
        modes=["g48", "g80", "g96", "g192", "g320", "b32x96", "b64x48", "g64", "g128", "channel",
               "tensor"],
        zp=["zp", "zp_fp16", "zp_bf16", "zp_fp32", "zp_fp32"]),
    # Session 23: long rows (K 8192..16384) at decode and 16-token sizes, where the long-stage
    # rules of sessions 21-22 pick their tiles; odd N; a few 33..256-token cases.
    "long": dict(
        k_max=16384, k_min=8192,
        n=lambda r: r.choice([r.randint(1, 700), r.randint(700, 5000), r.randint(5000, 12000),
                              r.choice([4096, 5120, 8192, 10240, 3001, 7777])]),
        m=[1, 1, 2, 5, 8, 9, 13, 16, 16, 23, 31, 32, 33, 64, 200],
        out=["bf16", "fp16", "fp16", "bf16", "fp32"], capped=True,
        acts=["bf16", "bf16", "fp16"]),
    # Session 20: the sm_75 kernels (fp16 activations) on every weight format.
    "turing": dict(
        k_max=6000, k_min=8,
        n=lambda r: r.choice([r.randint(1, 600), r.randint(600, 3000), r.randint(3000, 9000)]),
        m=[1, 3, 8, 9, 16, 32, 33, 64, 100, 128, 129, 256, 300, 512, 513, 1000, 2048],
        out=["bf16", "fp16", "fp32"], capped=True, acts=["fp16"]),
}
MODES = ["g16", "g32", "g64", "g128", "g128", "g256", "g512", "g1024", "channel", "channel",
         "b64x128", "b128x128", "tensor"]
ZERO_POINTS = ["zp", "zp", "zp_fp16", "zp_bf16", "zp_fp32"]
INTS = [f"int{b}" for b in range(1, 9)]
UINTS = [f"uint{b}" for b in range(1, 9)]
FLOATS = ["e2m1", "e2m3", "e3m2", "e4m3", "e5m2"]
SCALES = ["fp16", "bf16", "fp32", "e4m3", "ue8m0"]
ALIASES = ["mxfp4", "nvfp4", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp8", "fp8_block", "fp8_channel",
           "int4/g128/fp16", "uint4/g128/fp16/zp", "int8/channel/bf16"]
ALIAS_GROUP = {"mxfp4": 32, "nvfp4": 16, "mxfp6_e2m3": 32, "mxfp6_e3m2": 32, "mxfp8": 32,
               "fp8_block": 128, "fp8_channel": 1}


def spec(rng, profile):
    """A weight spec and the K its scales need K to be a multiple of."""
    if rng.random() < 0.15:
        a = rng.choice(ALIASES)
        return a, ALIAS_GROUP.get(a, 128 if "g128" in a else 1)
    t = rng.choice(INTS + UINTS + FLOATS)
    mode = rng.choice(profile.get("modes", MODES))
    s = f"{t}/{mode}/{rng.choice(SCALES)}"
    if t.startswith("uint") and rng.random() < 0.8:
        s += "/" + rng.choice(profile.get("zp", ZERO_POINTS))
    if rng.random() < 0.15:
        s += "/global"
    g = int(mode[1:]) if mode.startswith("g") else (
        int(mode.split("x")[1]) if mode.startswith("b") else 1)
    return s, g


def main():
    profile, seed, count = PROFILES[sys.argv[1]], int(sys.argv[2]), int(sys.argv[3])
    qgemm = os.environ.get("QGEMM_BIN", "build/qgemm")
    rng = random.Random(seed)
    out, bad = [], set()
    while len(out) < count:
        s, g = spec(rng, profile)
        if s in bad:
            continue
        k = g * rng.randint(max(1, profile["k_min"] // g), max(1, profile["k_max"] // g)) \
            if g > 1 else rng.randint(profile["k_min"], profile["k_max"])
        n = profile["n"](rng)
        m = rng.choice(profile["m"])
        act = rng.choice(profile.get("acts", ["bf16", "bf16", "fp16", "fp16", "e4m3/token",
                                              "int8/token", "e4m3/g128/fp32"]))
        if "g128" in act and k % 128:
            act = "bf16"
        out_t = rng.choice(profile["out"])
        bias = rng.random() < 0.3
        r = subprocess.run([qgemm, "verify", "--backend", "cpu", "--m", "1", "--n", "8", "--k",
                            str(k), "--weight", s, "--act", act], capture_output=True, text=True)
        txt = r.stdout + r.stderr
        if r.returncode != 0:
            if "FAIL" in txt:
                print("CPU FAIL", s, k, act, txt[-400:], file=sys.stderr)
            else:
                bad.add(s)
                print("rejected", s, k, act, txt.strip().splitlines()[-1][:200], file=sys.stderr)
            continue
        if profile["capped"] and act not in ("bf16", "fp16"):
            m, n = min(m, 64), min(n, 2048)
        line = f"--m {m} --n {n} --k {k} --weight {s} --act {act} --out {out_t}"
        if profile["capped"]:
            line += " --check-rows 96"
        out.append(line + (" --bias" if bias else ""))
    print("\n".join(out))


if __name__ == "__main__":
    main()
