#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace qgemm::cli {

// Each subcommand lives in its own file and registers itself on the app.
void add_info_command(CLI::App& app);
void add_formats_command(CLI::App& app);
void add_verify_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_jit_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_bench_command(CLI::App& app, const std::string& command_line);
void add_report_command(CLI::App& app);
void add_moe_command(CLI::App& app, const std::string& command_line);

}  // namespace qgemm::cli
