#pragma once

#include <string>

namespace qgemm {

/// Prints `message` to stderr the first time it is seen in this process (QGEMM_QUIET=1 silences
/// it): fallbacks are reported once, not on every layer build.
void log_once(const std::string& message);

}  // namespace qgemm
