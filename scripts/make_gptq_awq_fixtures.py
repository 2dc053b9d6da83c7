#!/usr/bin/env python3
"""Writes tiny GPTQ and AWQ checkpoints with the producers' own code, for the importer tests.

Each case under OUT (default tests/fixtures) is a checkpoint directory, gptq/<producer>_<case> or
awq/<producer>_<case>: config.json (quantization_config as that producer writes it),
model.safetensors (one linear layer, quantized and packed by the producer) and
expected.safetensors: the layer's weight [N, K] in the model's column order as the producer itself
dequantizes it, in the dtype it returns. The C++ test (tests/unit/producer_fixture_test.cpp)
imports each checkpoint and requires our dequantized weight, rounded to that dtype, to equal the
producer's bit for bit.

Producers, all run on the CPU:
  GPTQModel 7.7.0  GPTQ: its GPTQ (Hessian from random activations), TorchLinear packed by
                   pack_module (v1 zero points by its v2 -> v1 word conversion), dequantized by
                   TorchLinear.dequantize_weight after its own v1 -> v2 load conversion; its
                   offline dequantizer (utils.model_dequant.convert_gptq_file) must agree,
                   except on the v1 zero points of 0 of gptqmodel_int4_g32_asym_zero0.
                   AWQ: its AWQ pseudo-quantizer and AwqTorchLinear.pack (AwqGEMMLinear, the
                   same packing, refuses a machine without CUDA), dequantized by its
                   dequantize_gemm.
  AutoGPTQ 0.7.1   GPTQ: its GPTQ.fasterquant and the QuantLinear its pack_model picks without
                   CUDA kernels (qlinear_cuda_old; qlinear_cuda for act-order), dequantized by that
                   QuantLinear's CPU forward applied to the identity (AutoGPTQ has no dequantize
                   function; its forward unpacks, then multiplies). Its package __init__ needs
                   transformers < 5, so the modules are imported with the package stubbed.
  AutoAWQ 0.2.9    AWQ: AwqQuantizer.pseudo_quantize_tensor and WQLinear_GEMM.from_linear (as its
                   _apply_quant does, without the activation-aware scale search, which only
                   changes the float weights), dequantized by awq.utils.packing_utils.
                   dequantize_gemm; GPTQModel's dequantize_gemm must agree.

3-bit cases: both producers pack 32 codes into three words (fields straddle them); GPTQModel
shifts v1 3-bit zero points field by field, not as whole words.

Needs torch, gptqmodel==7.7.0, auto-gptq==0.7.1 and autoawq==0.2.9 (pip installs all three on a
machine without CUDA; their CUDA kernels are not used); the fixtures are committed, so CI needs
none of them. Run from the repository root:

    python scripts/make_gptq_awq_fixtures.py [OUT]
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import types
import zlib
from importlib.metadata import version

import torch
import torch.nn as nn
from safetensors.torch import load_file, save_file

PREFIX = "model.layers.0.mlp.down_proj"

# name: (bits, group_size, sym, desc_act, checkpoint_format, N, K, weight dtype)
GPTQMODEL_CASES = {
    "int4_g128_sym": (4, 128, True, False, "gptq", 64, 256, torch.float16),
    "int4_g32_asym": (4, 32, False, False, "gptq", 96, 256, torch.float16),
    "int4_g64_asym_act_order": (4, 64, False, True, "gptq", 64, 256, torch.float16),
    "int4_g32_sym_act_order": (4, 32, True, True, "gptq", 64, 256, torch.bfloat16),
    "int4_channel_sym": (4, -1, True, False, "gptq", 64, 256, torch.float16),
    "int8_g128_sym": (8, 128, True, False, "gptq", 64, 256, torch.bfloat16),
    "int8_g64_asym": (8, 64, False, False, "gptq", 64, 256, torch.float16),
    "int2_g64_asym": (2, 64, False, False, "gptq", 96, 256, torch.float16),
    "int3_g128_sym": (3, 128, True, False, "gptq", 64, 256, torch.float16),
    "int3_g32_asym": (3, 32, False, False, "gptq", 96, 256, torch.float16),
    "int3_g64_asym_act_order": (3, 64, False, True, "gptq", 64, 256, torch.float16),
    "int3_g64_asym_v2": (3, 64, False, False, "gptq_v2", 64, 256, torch.float16),
    "int4_g64_asym_v2": (4, 64, False, False, "gptq_v2", 64, 256, torch.float16),
    "int2_g32_asym_v2": (2, 32, False, False, "gptq_v2", 64, 256, torch.float16),
    # A v1 zero point of 0 (rows whose first group is all positive): GPTQModel stores it as
    # 2^bits - 1 with a borrow from the next zero point of the word.
    "int4_g32_asym_zero0": (4, 32, False, False, "gptq", 64, 256, torch.float16),
}
AUTOGPTQ_CASES = {
    "int4_g128_sym": (4, 128, True, False, "gptq", 64, 256, torch.float16),
    "int4_g32_asym_act_order": (4, 32, False, True, "gptq", 64, 256, torch.float16),
    "int8_g128_asym": (8, 128, False, False, "gptq", 64, 256, torch.float16),
    "int2_g64_sym": (2, 64, True, False, "gptq", 64, 256, torch.float16),
    "int3_g64_asym": (3, 64, False, False, "gptq", 64, 256, torch.float16),
}
# name: (group_size, zero_point, N, K, weight dtype)
AUTOAWQ_CASES = {
    "int4_g128": (128, True, 64, 256, torch.float16),
    "int4_g64": (64, True, 96, 256, torch.float16),
}
# name: (group_size, sym, N, K, weight dtype)
GPTQMODEL_AWQ_CASES = {
    "int4_g64_asym_bf16": (64, False, 64, 256, torch.bfloat16),
    "int4_g128_sym": (128, True, 64, 256, torch.float16),
}


def random_linear(n: int, k: int, dtype, seed: int) -> nn.Linear:
    torch.manual_seed(seed)
    linear = nn.Linear(k, n, bias=False)
    linear.weight.data = (torch.randn(n, k) * 0.05).to(dtype)
    return linear


def activations(k: int, dtype, batches: int = 4, rows: int = 64):
    """Calibration inputs whose features differ in scale, so act-order's order is a shuffle."""
    feature_scale = torch.rand(k) * 2 + 0.05
    return [(torch.randn(rows, k) * feature_scale).to(dtype) for _ in range(batches)]


def write_checkpoint(folder: str, tensors: dict, quantization_config: dict) -> None:
    os.makedirs(folder, exist_ok=True)
    save_file({f"{PREFIX}.{key}": value.contiguous() for key, value in tensors.items()},
              os.path.join(folder, "model.safetensors"))
    config = {"architectures": ["LlamaForCausalLM"], "quantization_config": quantization_config}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=1, sort_keys=True)
        f.write("\n")


def read_layer(folder: str) -> dict:
    """The layer's tensors as written, so the producers dequantize the file, not their modules."""
    tensors = load_file(os.path.join(folder, "model.safetensors"))
    return {key[len(PREFIX) + 1:]: value for key, value in tensors.items()}


def gptqmodel_config(qcfg) -> dict:
    """quantization_config as GPTQModel's save_quantized writes it: to_dict() after the meta
    fields save_quantized sets (its tooling fingerprint, then the fields that do not take part in
    inference), through JSON."""
    import gptqmodel
    from gptqmodel.quantization import config as c

    qcfg.meta_set_versionable(key=c.META_FIELD_QUANTIZER,
                              value=[f"{c.META_QUANTIZER_GPTQMODEL}:{gptqmodel.__version__}"])
    qcfg.meta_set(key=c.META_FIELD_URI, value=c.META_VALUE_URI)
    # gptaq and foem are None here, which save_quantized writes as None.
    for key, attr in ((c.META_FIELD_DAMP_PERCENT, "damp_percent"),
                      (c.META_FIELD_DAMP_AUTO_INCREMENT, "damp_auto_increment"),
                      (c.META_FIELD_STATIC_GROUPS, "static_groups"),
                      (c.META_FIELD_TRUE_SEQUENTIAL, "true_sequential"),
                      (c.META_FIELD_MSE, "mse"), (c.META_FIELD_GPTAQ_ENABLED, "gptaq"),
                      (c.META_FIELD_FOEM_ENABLED, "foem"),
                      (c.META_FIELD_ACT_GROUP_AWARE, "act_group_aware")):
        qcfg.meta_set(key=key, value=getattr(qcfg, attr, None))
    return json.loads(json.dumps(qcfg.to_dict()))


def gptqmodel_case(folder: str, bits: int, group_size: int, sym: bool, desc_act: bool, fmt: str,
                   n: int, k: int, dtype, seed: int) -> torch.Tensor:
    from gptqmodel.nn_modules.qlinear.torch import TorchLinear
    from gptqmodel.quantization import QuantizeConfig
    from gptqmodel.quantization.gptq import GPTQ
    from gptqmodel.utils.model import convert_gptq_v1_to_v2_format_module, pack_module
    from gptqmodel.utils.model_dequant import convert_gptq_file

    # act_group_aware (GPTQModel's default without desc_act) needs groups.
    qcfg = QuantizeConfig(bits=bits, group_size=group_size, sym=sym, desc_act=desc_act,
                          format=fmt, offload_to_disk=False,
                          act_group_aware=not desc_act and group_size > 0)
    linear = random_linear(n, k, dtype, seed)
    if folder.endswith("zero0"):
        linear.weight.data[:6, :group_size] = linear.weight.data[:6, :group_size].abs()
    gptq = GPTQ(linear, qcfg)
    gptq.quantizer.configure(perchannel=True)  # as GPTQProcessor configures it
    for x in activations(k, dtype):
        gptq.add_batch(x, None)
    wq, scale, zero, g_idx, *_ = gptq.quantize()
    linear.weight.data = wq  # GPTQProcessor packs the quantized weight
    module = TorchLinear(bits=bits, group_size=group_size, sym=sym, desc_act=desc_act,
                         in_features=k, out_features=n, bias=False, pack_dtype=torch.int32,
                         format=fmt, register_buffers=False)
    pack_module("layer", {"layer": module}, scale.cpu(), zero.cpu(), g_idx.cpu(),
                {"layer": linear}, TorchLinear, threading.Lock(), quantize_config=qcfg)
    tensors = {key: module.state_dict()[key] for key in ("qweight", "qzeros", "scales", "g_idx")}
    config = gptqmodel_config(qcfg)
    write_checkpoint(folder, tensors, config)

    # Dequantized as GPTQModel loads the file: TorchLinear, v1 zero points converted to v2.
    loaded = TorchLinear(bits=bits, group_size=group_size, sym=sym, desc_act=desc_act,
                         in_features=k, out_features=n, bias=False, pack_dtype=torch.int32,
                         format=fmt, register_buffers=True)
    loaded.load_state_dict(read_layer(folder), strict=False)
    if fmt == "gptq":
        convert_gptq_v1_to_v2_format_module(loaded, bits=bits, pack_dtype=torch.int32)
    expected = loaded.dequantize_weight().T
    offline = convert_gptq_file(os.path.join(folder, "model.safetensors"), expected.dtype, config,
                                "cpu")[f"{PREFIX}.weight"]
    if folder.endswith("zero0"):
        # NOTE: GPTQModel's offline dequantizer adds the v1 ones back field by field, without the
        # borrow its v2 -> v1 conversion took from the next zero point, so here it differs from
        # its own kernel (TorchLinear), whose exact round trip expected.safetensors holds.
        assert fmt == "gptq" and int(zero.min()) == 0, "the zero0 case has no zero point of 0"
        print(f"  {int((zero == 0).sum())} zero points of 0; GPTQModel's convert_gptq_file "
              f"differs from TorchLinear in {int((offline != expected).sum())} weights")
    else:
        assert torch.equal(offline, expected), "GPTQModel's convert_gptq_file disagrees"
    return expected


def import_auto_gptq():
    """AutoGPTQ's quantizer and QuantLinear modules, without its package __init__ (which imports
    transformers APIs that transformers 5 removed)."""
    import importlib.util
    if "auto_gptq" not in sys.modules:
        root = os.path.dirname(importlib.util.find_spec("auto_gptq").origin)
        for name, path in (("auto_gptq", root), ("auto_gptq.nn_modules", f"{root}/nn_modules")):
            package = types.ModuleType(name)
            package.__path__ = [path]
            sys.modules[name] = package
    from auto_gptq.nn_modules.qlinear import qlinear_cuda, qlinear_cuda_old
    from auto_gptq.quantization.gptq import GPTQ
    return GPTQ, qlinear_cuda_old.QuantLinear, qlinear_cuda.QuantLinear


def autogptq_case(folder: str, bits: int, group_size: int, sym: bool, desc_act: bool, fmt: str,
                  n: int, k: int, dtype, seed: int) -> torch.Tensor:
    GPTQ, CudaOldQuantLinear, CudaQuantLinear = import_auto_gptq()
    # pack_model's choice without exllama kernels (dynamically_import_QuantLinear).
    QuantLinear = CudaOldQuantLinear if not desc_act or group_size == -1 else CudaQuantLinear
    linear = random_linear(n, k, dtype, seed)
    gptq = GPTQ(linear)
    gptq.quantizer.configure(bits, perchannel=True, sym=sym, mse=False)
    for x in activations(k, dtype):
        gptq.add_batch(x, None)
    # fasterquant calls torch.cuda.synchronize() unconditionally; without CUDA it has nothing to
    # wait for.
    synchronize, torch.cuda.synchronize = torch.cuda.synchronize, lambda *args: None
    try:
        scale, zero, g_idx = gptq.fasterquant(percdamp=0.01, group_size=group_size,
                                              actorder=desc_act)
    finally:
        torch.cuda.synchronize = synchronize
    module = QuantLinear(bits, group_size, k, n, False, weight_dtype=dtype)
    module.pack(linear, scale, zero, g_idx)
    tensors = {key: module.state_dict()[key] for key in ("qweight", "qzeros", "scales", "g_idx")}
    # BaseQuantizeConfig.to_dict() with its defaults, as save_quantized writes it.
    config = {"bits": bits, "group_size": group_size, "damp_percent": 0.01, "desc_act": desc_act,
              "static_groups": False, "sym": sym, "true_sequential": True,
              "model_name_or_path": None, "model_file_base_name": "model",
              "is_marlin_format": False, "quant_method": "gptq"}
    write_checkpoint(folder, tensors, config)

    loaded = QuantLinear(bits, group_size, k, n, False, weight_dtype=dtype)
    loaded.load_state_dict(read_layer(folder), strict=False)
    with torch.no_grad():
        expected = loaded(torch.eye(k, dtype=dtype)).T  # row i of the identity picks column i
    return expected


def write_awq_layer(folder: str, module, config: dict, group_size: int, dequantize,
                    second_dequantize, disagreement: str) -> torch.Tensor:
    """Writes an AWQ GEMM module's tensors and config, then dequantizes what was written with the
    producer's own function, checked against the other producer's reading of the same layout."""
    tensors = {key: getattr(module, key) for key in ("qweight", "qzeros", "scales")}
    write_checkpoint(folder, tensors, config)
    t = read_layer(folder)
    expected = dequantize(t["qweight"], t["qzeros"], t["scales"], 4, group_size).T
    second = second_dequantize(t["qweight"], t["qzeros"], t["scales"], 4, group_size).T
    assert torch.equal(second, expected), disagreement
    return expected


def autoawq_case(folder: str, group_size: int, zero_point: bool, n: int, k: int, dtype,
                 seed: int) -> torch.Tensor:
    from awq.modules.linear.gemm import WQLinear_GEMM
    from awq.quantize.quantizer import AwqQuantizer
    from awq.utils.packing_utils import dequantize_gemm
    from gptqmodel.quantization.awq.utils.packing_utils import dequantize_gemm as gm_dequantize

    linear = random_linear(n, k, dtype, seed).half()  # _apply_quant: linear_layer.half()
    quantizer = AwqQuantizer.__new__(AwqQuantizer)  # pseudo_quantize_tensor reads these three
    quantizer.w_bit, quantizer.group_size, quantizer.zero_point = 4, group_size, zero_point
    linear.weight.data, scales, zeros = quantizer.pseudo_quantize_tensor(linear.weight.data)
    module = WQLinear_GEMM.from_linear(linear, 4, group_size, init_only=False,
                                       scales=scales.t().contiguous(),
                                       zeros=zeros.t().contiguous())
    # AwqConfig.to_transformers_dict(), as save_quantized writes it into config.json.
    config = {"quant_method": "awq", "zero_point": zero_point, "group_size": group_size, "bits": 4,
              "version": "gemm", "modules_to_not_convert": None}
    return write_awq_layer(folder, module, config, group_size, dequantize_gemm, gm_dequantize,
                           "GPTQModel's dequantize_gemm disagrees with AutoAWQ's")


def gptqmodel_awq_case(folder: str, group_size: int, sym: bool, n: int, k: int, dtype,
                       seed: int) -> torch.Tensor:
    from gptqmodel.looper.awq_processor import AWQProcessor
    from gptqmodel.nn_modules.qlinear.torch_awq import AwqTorchLinear
    from gptqmodel.quantization import QuantizeConfig
    from gptqmodel.quantization.awq.utils.packing_utils import dequantize_gemm
    from awq.utils.packing_utils import dequantize_gemm as awq_dequantize

    qcfg = QuantizeConfig(bits=4, group_size=group_size, sym=sym, method="awq", format="gemm",
                          offload_to_disk=False)
    linear = random_linear(n, k, dtype, seed)
    # AWQProcessor.pseudo_quantize_tensor reads only the config.
    wq, scales, zeros = AWQProcessor.pseudo_quantize_tensor(types.SimpleNamespace(qcfg=qcfg),
                                                            linear.weight.data)
    linear.weight.data = wq
    module = AwqTorchLinear(bits=4, group_size=group_size, sym=sym, desc_act=False,
                            in_features=k, out_features=n, bias=False, pack_dtype=torch.int32,
                            register_buffers=False)
    module.pack(linear, scales, zeros)
    return write_awq_layer(folder, module, gptqmodel_config(qcfg), group_size, dequantize_gemm,
                           awq_dequantize, "AutoAWQ's dequantize_gemm disagrees with GPTQModel's")


def finish(folder: str, expected: torch.Tensor, n: int, k: int) -> None:
    assert expected.shape == (n, k), (folder, tuple(expected.shape))
    save_file({f"{PREFIX}.weight": expected.contiguous()},
              os.path.join(folder, "expected.safetensors"))
    tensors = read_layer(folder)
    print(f"{folder}: {n} x {k} -> "
          f"{ {key: tuple(value.shape) for key, value in sorted(tensors.items())} }, "
          f"expected {expected.dtype}")


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("tests", "fixtures")
    gptq_root, awq_root = os.path.join(out, "gptq"), os.path.join(out, "awq")
    for root in (gptq_root, awq_root):
        if os.path.isdir(root):
            shutil.rmtree(root)
    for producer, cases, root, write in (
            ("gptqmodel", GPTQMODEL_CASES, gptq_root, gptqmodel_case),
            ("autogptq", AUTOGPTQ_CASES, gptq_root, autogptq_case),
            ("autoawq", AUTOAWQ_CASES, awq_root, autoawq_case),
            ("gptqmodel", GPTQMODEL_AWQ_CASES, awq_root, gptqmodel_awq_case)):
        for name, args in sorted(cases.items()):
            folder = os.path.join(root, f"{producer}_{name}")
            # A seed of the case's own, so adding a case leaves the others' fixtures as they are.
            seed = zlib.crc32(f"{os.path.basename(root)}/{producer}_{name}".encode()) % 100000
            n, k = args[-3], args[-2]
            finish(folder, write(folder, *args, seed), n, k)
    versions = (f"GPTQModel {version('gptqmodel')}, AutoGPTQ {version('auto-gptq')}, "
                f"AutoAWQ {version('autoawq')} and torch {torch.__version__}")
    for root, what in ((gptq_root, "GPTQModel (gptqmodel_*) and AutoGPTQ (autogptq_*)"),
                       (awq_root, "AutoAWQ (autoawq_*) and GPTQModel (gptqmodel_*)")):
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write(f"Written by {what} on the CPU: `python scripts/make_gptq_awq_fixtures.py` "
                    f"with {versions}; tests/unit/producer_fixture_test.cpp reads them. "
                    "scripts/make_gptq_awq_fixtures.py says which producer function quantized, "
                    "packed and dequantized each case.\n")
    with open(os.path.join(gptq_root, "README.md"), "a") as f:
        f.write("\ngptqmodel_int4_g32_asym_zero0 has v1 zero points of 0, which GPTQModel stores "
                "as 2^bits - 1 with a borrow from the next zero point of the word; "
                "expected.safetensors holds its TorchLinear kernel's reading (the exact round "
                "trip), from which its offline convert_gptq_file differs.\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
