#include "jit/compiler.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <regex>
#include <set>

#include "jit/embedded_headers.h"
#include "jit/nvrtc_library.h"
#include "util/hash.h"
#include "util/error.h"

namespace qgemm {
namespace {

// Digest of the embedded headers, computed once per process.
const std::string& embedded_headers_digest() {
  static const std::string digest = headers_digest(jit::embedded_headers());
  return digest;
}

std::string nvrtc_error(const NvrtcLibrary* nvrtc, nvrtcResult r) {
  return nvrtc->nvrtcGetErrorString(r);
}

std::mutex ptx_archs_mutex;
std::set<std::string>& ptx_archs() {
  static std::set<std::string> archs;
  return archs;
}

// Whether a kernel is compiled to PTX, not SASS: where a GPU is described as an older target
// than it is (device_target.h), the driver turns the target's PTX into code for the GPU at hand
// (the SASS of an older major version does not load on it).
bool for_newer_gpu(const KernelSpec& spec) {
  std::lock_guard<std::mutex> lock(ptx_archs_mutex);
  return ptx_archs().count(spec.arch) > 0;
}

// Runs NVRTC on a spec; `ptx` selects the virtual architecture and PTX output.
Expected<CompiledKernel> run_nvrtc(const KernelSpec& spec, bool ptx) {
  auto lib = nvrtc_library();
  if (!lib) return lib.status();
  const NvrtcLibrary* nvrtc = *lib;
  const auto& headers = jit::embedded_headers();
  std::vector<const char*> header_sources, header_names;
  for (const auto& h : headers) {
    header_sources.push_back(h.source.data());
    header_names.push_back(h.name.data());
  }
  // NOTE: embedded header views point into NUL-terminated arrays, so data() is a C string.
  nvrtcProgram program;
  nvrtcResult r = nvrtc->nvrtcCreateProgram(
      &program, spec.source.c_str(), (spec.family + ".cu").c_str(),
      static_cast<int>(headers.size()), header_sources.data(), header_names.data());
  if (r != NVRTC_SUCCESS)
    return Status(ErrorCode::kCompileError, str("nvrtcCreateProgram: ", nvrtc_error(nvrtc, r)));
  struct Destroy {
    const NvrtcLibrary* n;
    nvrtcProgram* p;
    ~Destroy() { n->nvrtcDestroyProgram(p); }
  } destroy{nvrtc, &program};

  nvrtc->nvrtcAddNameExpression(program, spec.name_expression.c_str());
  std::vector<std::string> options = compile_options(spec.arch);
  if (ptx) {
    std::string virt = spec.arch;
    virt.replace(0, 3, "compute_");
    options[0] = "--gpu-architecture=" + virt;
  }
  std::vector<const char*> option_ptrs;
  for (const auto& o : options) option_ptrs.push_back(o.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  r = nvrtc->nvrtcCompileProgram(program, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  CompiledKernel out;
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  size_t log_size = 0;
  nvrtc->nvrtcGetProgramLogSize(program, &log_size);
  out.log.resize(log_size);
  if (log_size > 0) nvrtc->nvrtcGetProgramLog(program, out.log.data());
  while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
  if (r != NVRTC_SUCCESS)
    return Status(ErrorCode::kCompileError,
                  str("compiling ", spec.family, " [", spec.config, "] for ", spec.arch,
                      " failed (", nvrtc_error(nvrtc, r), "):\n", out.log));
  const char* lowered = nullptr;
  r = nvrtc->nvrtcGetLoweredName(program, spec.name_expression.c_str(), &lowered);
  if (r != NVRTC_SUCCESS || lowered == nullptr)
    return Status(ErrorCode::kCompileError, str("NVRTC could not lower '", spec.name_expression,
                                                "': ", nvrtc_error(nvrtc, r)));
  out.lowered_name = lowered;
  size_t size = 0;
  if (ptx) {
    nvrtc->nvrtcGetPTXSize(program, &size);
    out.cubin.resize(size);
    nvrtc->nvrtcGetPTX(program, out.cubin.data());
  } else {
    nvrtc->nvrtcGetCUBINSize(program, &size);
    out.cubin.resize(size);
    nvrtc->nvrtcGetCUBIN(program, out.cubin.data());
  }
  out.resources = parse_ptxas_report(out.log);
  return out;
}

}  // namespace

void compile_as_ptx(const std::string& arch) {
  std::lock_guard<std::mutex> lock(ptx_archs_mutex);
  ptx_archs().insert(arch);
}

std::vector<std::string> compile_options(const std::string& arch) {
  return {"--gpu-architecture=" + arch, "--std=c++17", "-default-device", "-Xptxas=-v",
          "--extra-device-vectorization"};
}

std::string headers_digest(const std::vector<jit::EmbeddedHeader>& headers) {
  Hasher hasher;
  for (const auto& header : headers) hasher.add(header.name).add(header.source);
  return hasher.hex();
}

Expected<std::string> kernel_key_with_headers(const KernelSpec& spec, std::string_view digest) {
  auto lib = nvrtc_library();
  if (!lib) return lib.status();
  Hasher h;
  h.add(spec.source)
      .add(spec.name_expression)
      .add(digest)
      .add(int64_t((*lib)->major))
      .add(int64_t((*lib)->minor))
      .add(spec.arch)
      .add(int64_t(for_newer_gpu(spec)));
  for (const auto& o : compile_options(spec.arch)) h.add(o);
  return h.hex();
}

Expected<std::string> kernel_key(const KernelSpec& spec) {
  return kernel_key_with_headers(spec, embedded_headers_digest());
}

Expected<CompiledKernel> compile_kernel(const KernelSpec& spec) {
  auto key = kernel_key(spec);
  if (!key) return key.status();
  auto out = run_nvrtc(spec, for_newer_gpu(spec));
  if (out) out->key = *key;
  return out;
}

Expected<std::string> compile_ptx(const KernelSpec& spec) {
  auto out = run_nvrtc(spec, true);
  if (!out) return out.status();
  std::string ptx = std::move(out->cubin);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();  // NVRTC counts the terminator
  return ptx;
}

ResourceUsage parse_ptxas_report(const std::string& log) {
  static const std::regex regs(R"(Used (\d+) registers)");
  static const std::regex spills(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex stack(R"((\d+) bytes stack frame)");
  static const std::regex smem(R"((\d+) bytes smem)");
  // The largest value of capture `group` over every match of `re`, or `none` without a match.
  auto largest = [&log](const std::regex& re, int group, int none) {
    int best = none;
    for (std::sregex_iterator it(log.begin(), log.end(), re), end; it != end; ++it)
      best = std::max(best, std::stoi((*it)[group]));
    return best;
  };
  ResourceUsage u;
  u.registers = largest(regs, 1, -1);
  u.spill_stores = largest(spills, 1, 0);
  u.spill_loads = largest(spills, 2, 0);
  u.stack_frame = largest(stack, 1, 0);
  u.static_smem = largest(smem, 1, 0);
  return u;
}

bool reports_serialized_wgmma(const std::string& log) {
  return log.find("wgmma.mma_async instructions are serialized") != std::string::npos;
}

}  // namespace qgemm
