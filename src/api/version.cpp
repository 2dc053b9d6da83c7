#include "qgemm/version.h"

namespace qgemm {

const char* version() { return QGEMM_VERSION_STRING; }

}  // namespace qgemm
