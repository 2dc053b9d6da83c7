#pragma once

// The whole public API of qgemm.
#include "qgemm/device.h"
#include "qgemm/dtype.h"
#include "qgemm/format.h"
#include "qgemm/grouped.h"
#include "qgemm/linear.h"
#include "qgemm/moe.h"
#include "qgemm/quantized.h"
#include "qgemm/reference.h"
#include "qgemm/status.h"
#include "qgemm/version.h"
