#include "backend/device_target.h"

#include <algorithm>

#include "jit/compiler.h"
#include "util/log.h"
#include "util/error.h"
#include "backend/device_presets.h"

namespace qgemm {

bool describe_as_kernel_target(DeviceInfo& info, const char* target) {
  Expected<DeviceInfo> preset = invalid_argument("no target");
  if (target != nullptr && *target != '\0') {
    auto forced = device_preset(target);
    if (forced && forced->sm() < 90)
      preset = forced;
    else
      log_once(str("qgemm: QGEMM_TARGET_ARCH=", target,
                   " is not an older target (sm_75, sm_80, sm_86, sm_89); ignored"));
  }
  const bool from_env = preset.ok();
  // NOTE: the newest target is sm_90a; later GPUs run the sm_80 kernels as PTX (forward
  // compatible by the CUDA model; untested on such a GPU).
  if (!preset && info.sm_major >= 10) preset = device_preset("sm_80");
  if (!preset || preset->sm() >= info.sm()) return false;
  info.name += str(" (as ", preset->arch(), ")");
  info.sm_major = preset->sm_major;
  info.sm_minor = preset->sm_minor;
  if (from_env) info.smem_per_block = std::min(info.smem_per_block, preset->smem_per_block);
  compile_as_ptx(preset->arch());
  return true;
}

}  // namespace qgemm
