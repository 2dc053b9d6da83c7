#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "verify_runner.h"

namespace qgemm::cli {

void add_verify_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "verify", "Quantize a random layer, run it on a backend and compare with the CPU reference");
  auto opt = std::make_shared<VerifyOptions>();
  cmd->add_option("--m", opt->m, "Tokens (rows of A)")->required();
  cmd->add_option("--n", opt->n, "Output features (not with --checkpoint)");
  cmd->add_option("--k", opt->k, "Input features (not with --checkpoint)");
  cmd->add_option("--weight", opt->weight,
                  "Weight spec or alias, e.g. int4/g128/fp16 (not with --checkpoint)");
  cmd->add_option("--checkpoint", opt->checkpoint,
                  "Checkpoint directory: run one of its layers (--layer) on random activations");
  cmd->add_option("--layer", opt->layer, "The checkpoint's layer (qgemm inspect lists them)");
  cmd->add_option("--act", opt->act, "Activation spec, e.g. bf16 or e4m3/token")
      ->default_val("bf16");
  cmd->add_option("--out", opt->out, "Output type: bf16, fp16 or fp32")->default_val("bf16");
  cmd->add_option("--experts", opt->experts, "Experts (MoE); 0 = dense layer")->default_val(0);
  cmd->add_option("--topk", opt->top_k, "Experts per token (MoE, routed layout)")->default_val(0);
  cmd->add_option("--layout", opt->layout,
                  "MoE rows: routed (tokens, top-k ids), contiguous (rows sorted by expert, "
                  "offsets) or masked ([experts, m, k] blocks, counts)")
      ->default_val("routed");
  cmd->add_flag("--reduce", opt->reduce, "MoE: sum the top-k outputs per token (weighted)");
  cmd->add_flag("--bias", opt->bias, "Add a random bias");
  cmd->add_option("--backend", opt->backend, "auto, cpu, jit or qdq")->default_val("auto");
  cmd->add_option("--seed", opt->seed, "Random seed")->default_val(1);
  cmd->add_option("--check-rows", opt->check_rows,
                  "Rows compared with the reference (0 = all); large problems sample rows")
      ->default_val(0);
  cmd->callback([opt] {
    const int rc = run_verify(*opt);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace qgemm::cli
