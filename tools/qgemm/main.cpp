#include <cstdio>
#include <string>

#include "commands.h"
#include "qgemm/version.h"

int main(int argc, char** argv) {
  CLI::App app{
      "qgemm: quantized GEMM for LLM inference on NVIDIA GPUs (version " QGEMM_VERSION_STRING ")"};
  app.require_subcommand(1);
  qgemm::cli::add_info_command(app);
  qgemm::cli::add_formats_command(app);
  qgemm::cli::add_demo_command(app);
  qgemm::cli::add_plan_command(app);
  qgemm::cli::add_verify_command(app);
  qgemm::cli::add_jit_command(app);
  qgemm::cli::add_tune_command(app);
  qgemm::cli::add_inspect_command(app);
  std::string command_line = "qgemm";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
  qgemm::cli::add_bench_command(app, command_line);
  qgemm::cli::add_report_command(app);
  qgemm::cli::add_moe_command(app, command_line);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
