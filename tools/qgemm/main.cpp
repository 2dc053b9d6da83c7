#include <cstdio>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"qgemm: quantized GEMM for LLM inference on NVIDIA GPUs (version " QGEMM_VERSION ")"};
  app.require_subcommand(1);
  qgemm::cli::add_info_command(app);
  qgemm::cli::add_formats_command(app);
  qgemm::cli::add_verify_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
