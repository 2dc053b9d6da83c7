#pragma once

#include <initializer_list>
#include <string>

#include "qgemm/status.h"

namespace qgemm {

/// A shared library opened at run time, so that qgemm has no link-time dependency on it.
struct OpenedLibrary {
  void* handle = nullptr;  ///< null when no candidate could be opened
  std::string name;        ///< the candidate that was opened
  std::string tried;       ///< the candidates that could not be opened, comma-separated
};

/// Opens the first of `candidates` that dlopen can load (RTLD_NOW | RTLD_LOCAL).
OpenedLibrary open_first_library(std::initializer_list<const char*> candidates);

/// The address of `symbol` in the opened library `library`; kNotFound "<library> lacks <symbol>"
/// when it has none.
Expected<void*> library_symbol(void* handle, const std::string& library, const char* symbol);

/// Points the function pointer `fn` at `symbol` of the opened library.
template <typename Fn>
Status resolve_symbol(void* handle, const std::string& library, const char* symbol, Fn& fn) {
  auto found = library_symbol(handle, library, symbol);
  if (!found) return found.status();
  fn = reinterpret_cast<Fn>(*found);
  return Status();
}

/// What `kLoad` returned on its first call: it runs once per process, whichever thread asks
/// first, and every later caller gets the same result (a library loaded, or why not).
template <auto kLoad>
const auto& loaded_once() {
  static const auto result = kLoad();
  return result;
}

}  // namespace qgemm
