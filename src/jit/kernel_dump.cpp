#include "jit/kernel_dump.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "jit/compiler.h"
#include "util/error.h"

namespace qgemm {
namespace {

Status write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Status(ErrorCode::kIoError, str("cannot write kernel dump ", path));
  return Status();
}

// The generated TU with a header saying what it is and how to compile it outside qgemm.
std::string annotated_source(const KernelSpec& spec) {
  std::string options;
  for (const auto& o : compile_options(spec.arch)) options += " " + o;
  return str("// qgemm ", spec.family, " [", spec.config, "] for ", spec.arch, ", entry ",
             spec.name_expression, ", ", spec.threads, " threads, ", spec.dynamic_smem,
             " bytes dynamic smem\n// NVRTC options:", options,
             "; headers come from qgemm's kernels/ directory\n", spec.source);
}

}  // namespace

std::string kernel_dump_stem(const std::string& dir, const std::string& family,
                             const std::string& key) {
  return str(dir, "/", family, "-", key.substr(0, 12));
}

Status dump_kernel(const std::string& dir, const KernelSpec& spec, const std::string& key,
                   const CompiledKernel* compiled, const std::string& log) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return Status(ErrorCode::kIoError,
                  str("cannot create dump directory ", dir, ": ", ec.message()));
  const std::string stem = kernel_dump_stem(dir, spec.family, key);
  QGEMM_RETURN_IF_ERROR(write_file(stem + ".cu", annotated_source(spec)));
  QGEMM_RETURN_IF_ERROR(write_file(stem + ".log", log));
  if (compiled == nullptr) return Status();
  QGEMM_RETURN_IF_ERROR(write_file(stem + ".cubin", compiled->cubin));
  auto ptx = compile_ptx(spec);
  if (!ptx)
    return Status(ptx.status().code(),
                  str("PTX for the dump of ", stem, ": ", ptx.status().message()));
  return write_file(stem + ".ptx", *ptx);
}

}  // namespace qgemm
