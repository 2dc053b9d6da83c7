#pragma once

#include <string>

#include "qgemm/device.h"
#include "qgemm/status.h"

namespace qgemm {

/// Typical device descriptions for planning without a GPU: "sm_75" (T4), "sm_80" (A100),
/// "sm_86" (A10), "sm_89" (L40S), "sm_90" / "sm_90a" (H100), "h200".
Expected<DeviceInfo> device_preset(const std::string& arch);

}  // namespace qgemm
