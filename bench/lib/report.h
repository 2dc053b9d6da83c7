#pragma once

#include <string>

#include "bench/lib/runner.h"

namespace qgemm::bench {

/// `v` with `digits` decimals, or "-" when it is not finite (unmeasured).
std::string fixed_text(double v, int digits);

/// The terminal table: one block per problem, a row per (M, backend).
std::string render_table(const BenchReport& report);

/// The JSON report (schema "qgemm-bench/1", documented in the README).
std::string render_json(const BenchReport& report);

/// An SVG with one panel per problem: TFLOPS against M per backend, with the measured compute
/// ceiling and the bandwidth roofline of the problem's format.
std::string render_plot(const BenchReport& report);

/// Writes text to a file; kIoError naming the path when it cannot.
Status write_text(const std::string& text, const std::string& path);

}  // namespace qgemm::bench
