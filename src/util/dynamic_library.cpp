#include "util/dynamic_library.h"

#include <dlfcn.h>

#include "util/error.h"

namespace qgemm {

OpenedLibrary open_first_library(std::initializer_list<const char*> candidates) {
  OpenedLibrary opened;
  for (const char* name : candidates) {
    opened.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (opened.handle != nullptr) {
      opened.name = name;
      return opened;
    }
    opened.tried += str(opened.tried.empty() ? "" : ", ", name);
  }
  return opened;
}

Expected<void*> library_symbol(void* handle, const std::string& library, const char* symbol) {
  void* address = dlsym(handle, symbol);
  if (address == nullptr) return Status(ErrorCode::kNotFound, str(library, " lacks ", symbol));
  return address;
}

}  // namespace qgemm
