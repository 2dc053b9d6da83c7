#include "jit/pad_rows.h"

namespace qgemm {

KernelSpec pad_rows_spec(const std::string& arch) {
  KernelSpec s;
  s.family = "pad_rows";
  s.config = "u16 rows";
  s.arch = arch;
  s.threads = 256;
  s.source = "#include \"dense/pad_rows.cuh\"\n";
  s.name_expression = "&qgemm::pad_rows_kernel";
  return s;
}

}  // namespace qgemm
