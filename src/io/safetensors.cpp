#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace qgemm {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// NOTE: the largest header accepted. Real checkpoints' headers are a few hundred KB (tens of
// thousands of tensors); a length past this is a damaged or hostile file, refused before
// anything is parsed.
constexpr int64_t kMaxHeaderBytes = 100 << 20;
// JSON nesting the parser may see: a header is an object of objects holding arrays (depth 3).
// Deeper input is refused before parsing, so no input can exhaust the parser's stack.
constexpr int kMaxJsonDepth = 16;

struct DtypeSize {
  std::string_view name;
  int bytes;
};
constexpr DtypeSize kDtypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1},
    {"U16", 2},  {"I16", 2}, {"F16", 2}, {"BF16", 2},    {"U32", 4},     {"I32", 4},
    {"F32", 4},  {"U64", 8}, {"I64", 8}, {"F64", 8},
};

// The deepest nesting of arrays and objects in `text`, outside strings.
int json_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// A non-negative integer that fits int64, from a JSON number.
bool as_size(const json& v, int64_t& out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > uint64_t(std::numeric_limits<int64_t>::max())) return false;
    out = int64_t(u);
    return true;
  }
  if (v.is_number_integer()) {
    out = v.get<int64_t>();
    return out >= 0;
  }
  return false;
}

// The tensor of header entry (key, entry), with its size checked against its offsets.
Expected<SafetensorsTensor> read_entry(const std::string& file, const std::string& key,
                                       const json& entry, const uint8_t* data, int64_t data_size) {
  const std::string where = str("safetensors file '", file, "': tensor '", key, "'");
  if (!entry.is_object()) return invalid_argument(str(where, ": header entry is not an object"));
  const auto dtype = entry.find("dtype");
  const auto shape = entry.find("shape");
  const auto offsets = entry.find("data_offsets");
  if (dtype == entry.end() || shape == entry.end() || offsets == entry.end())
    return invalid_argument(str(where, ": needs dtype, shape and data_offsets"));
  if (!dtype->is_string()) return invalid_argument(str(where, ": dtype is not a string"));
  SafetensorsTensor t;
  t.name = key;
  t.dtype = dtype->get<std::string>();
  const int element_bytes = safetensors_dtype_bytes(t.dtype);
  if (element_bytes == 0)
    return invalid_argument(str(where, ": unknown dtype '", t.dtype,
                                "'; known: BOOL, U8, I8, F8_E4M3, F8_E5M2, F8_E8M0, U16, I16, "
                                "F16, BF16, U32, I32, F32, U64, I64, F64"));
  if (!shape->is_array() || shape->size() > 8)
    return invalid_argument(str(where, ": shape must be an array of at most 8 sizes"));
  int64_t bytes = element_bytes;
  for (const json& d : *shape) {
    int64_t size = 0;
    if (!as_size(d, size)) return invalid_argument(str(where, ": shape holds ", d.dump()));
    if (size > 0 && bytes > std::numeric_limits<int64_t>::max() / size)
      return invalid_argument(str(where, ": shape ", shape->dump(), " overflows 64 bits"));
    bytes *= size;
    t.shape.push_back(size);
  }
  int64_t begin = 0, end = 0;
  if (!offsets->is_array() || offsets->size() != 2 || !as_size((*offsets)[0], begin) ||
      !as_size((*offsets)[1], end) || begin > end)
    return invalid_argument(
        str(where, ": data_offsets must be [begin, end] with begin <= end, got ", offsets->dump()));
  if (end > data_size)
    return invalid_argument(str(where, ": data_offsets [", begin, ", ", end,
                                ") run past the end of the data (", data_size, " bytes)"));
  if (end - begin != bytes)
    return invalid_argument(str(where, ": ", t.dtype, " ", shape->dump(), " is ", bytes,
                                " bytes, but data_offsets [", begin, ", ", end, ") hold ",
                                end - begin));
  t.data = data + begin;
  t.bytes = bytes;
  return t;
}

// The bytes of a file mapped read-only; unmapped when the last holder lets go.
Expected<std::shared_ptr<const void>> map_file(const std::string& path, int64_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status(ErrorCode::kNotFound,
                  str("safetensors file '", path, "': cannot open: ", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(ErrorCode::kIoError, str("safetensors file '", path, "': not a regular file"));
  }
  size = int64_t(st.st_size);
  if (size == 0) {
    ::close(fd);
    return std::shared_ptr<const void>(std::make_shared<char>(0));
  }
  void* p = ::mmap(nullptr, size_t(size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED)
    return Status(ErrorCode::kIoError,
                  str("safetensors file '", path, "': mmap failed: ", std::strerror(errno)));
  const size_t length = size_t(size);
  return std::shared_ptr<const void>(
      p, [length](const void* q) { ::munmap(const_cast<void*>(q), length); });
}

}  // namespace

int64_t SafetensorsTensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int safetensors_dtype_bytes(std::string_view dtype) {
  for (const DtypeSize& d : kDtypes)
    if (d.name == dtype) return d.bytes;
  return 0;
}

Expected<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  int64_t size = 0;
  auto mapping = map_file(path, size);
  if (!mapping) return mapping.status();
  const auto* bytes = static_cast<const uint8_t*>(mapping->get());
  return validate(std::move(*mapping), bytes, size, path);
}

Expected<SafetensorsFile> SafetensorsFile::parse(std::vector<uint8_t> bytes,
                                                 const std::string& name) {
  auto buffer = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  const uint8_t* data = buffer->data();
  const int64_t size = int64_t(buffer->size());
  return validate(std::shared_ptr<const void>(buffer, data), data, size, name);
}

Expected<SafetensorsFile> SafetensorsFile::validate(std::shared_ptr<const void> storage,
                                                    const uint8_t* bytes, int64_t size,
                                                    const std::string& name) {
  const std::string where = str("safetensors file '", name, "'");
  if (size < 8)
    return invalid_argument(
        str(where, ": ", size, " bytes, shorter than the 8-byte header length"));
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) header_length = header_length << 8 | bytes[i];
  if (header_length > uint64_t(std::min<int64_t>(size - 8, kMaxHeaderBytes)))
    return invalid_argument(str(where, ": header length ", header_length, " exceeds ",
                                size - 8 < kMaxHeaderBytes ? "the file" : "the 100 MB limit", " (",
                                size, " bytes)"));
  const std::string_view header(reinterpret_cast<const char*>(bytes + 8), header_length);
  if (json_depth(header) > kMaxJsonDepth)
    return invalid_argument(str(where, ": the header nests deeper than ", kMaxJsonDepth));
  json j;
  try {
    j = json::parse(header);
  } catch (const json::exception& e) {
    return invalid_argument(str(where, ": the header is not JSON: ", e.what()));
  }
  if (!j.is_object()) return invalid_argument(str(where, ": the header is not a JSON object"));

  SafetensorsFile file;
  file.name_ = name;
  file.storage_ = std::move(storage);
  const uint8_t* data = bytes + 8 + header_length;
  const int64_t data_size = size - 8 - int64_t(header_length);
  for (const auto& [key, value] : j.items()) {
    if (key == "__metadata__") {
      if (!value.is_object())
        return invalid_argument(str(where, ": __metadata__ is not an object"));
      for (const auto& [mk, mv] : value.items()) {
        if (!mv.is_string())
          return invalid_argument(str(where, ": __metadata__ value '", mk, "' is not a string"));
        file.metadata_[mk] = mv.get<std::string>();
      }
      continue;
    }
    auto t = read_entry(name, key, value, data, data_size);
    if (!t) return t.status();
    file.tensors_.push_back(std::move(*t));
  }
  std::sort(file.tensors_.begin(), file.tensors_.end(),
            [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
              return a.data != b.data ? a.data < b.data : a.bytes < b.bytes;
            });
  for (size_t i = 1; i < file.tensors_.size(); ++i) {
    const SafetensorsTensor& a = file.tensors_[i - 1];
    const SafetensorsTensor& b = file.tensors_[i];
    if (a.data + a.bytes > b.data)
      return invalid_argument(str(where, ": tensors '", a.name, "' and '", b.name,
                                  "' overlap (bytes ", a.data - data, "..", a.data - data + a.bytes,
                                  " and ", b.data - data, "..)"));
  }
  return file;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view tensor) const {
  for (const SafetensorsTensor& t : tensors_)
    if (t.name == tensor) return &t;
  return nullptr;
}

Expected<SafetensorsCheckpoint> SafetensorsCheckpoint::open(const std::string& path) {
  SafetensorsCheckpoint c;
  std::error_code ec;
  std::vector<std::string> shards;
  if (fs::is_directory(path, ec)) {
    const fs::path index = fs::path(path) / "model.safetensors.index.json";
    if (fs::exists(index, ec)) {
      std::ifstream in(index);
      json j;
      try {
        j = json::parse(in);
      } catch (const json::exception& e) {
        return invalid_argument(
            str("checkpoint index '", index.string(), "' is not JSON: ", e.what()));
      }
      const auto map = j.find("weight_map");
      if (!j.is_object() || map == j.end() || !map->is_object())
        return invalid_argument(
            str("checkpoint index '", index.string(), "' has no weight_map object"));
      for (const auto& [tensor, shard] : map->items()) {
        if (!shard.is_string() || shard.get<std::string>().find('/') != std::string::npos)
          return invalid_argument(str("checkpoint index '", index.string(), "': tensor '", tensor,
                                      "' maps to ", shard.dump(), ", not a file name"));
        const std::string file = (fs::path(path) / shard.get<std::string>()).string();
        if (std::find(shards.begin(), shards.end(), file) == shards.end()) shards.push_back(file);
      }
    } else if (fs::exists(fs::path(path) / "model.safetensors", ec)) {
      shards.push_back((fs::path(path) / "model.safetensors").string());
    } else {
      return Status(ErrorCode::kNotFound,
                    str("checkpoint '", path,
                        "' holds neither model.safetensors nor model.safetensors.index.json"));
    }
  } else {
    shards.push_back(path);
  }
  for (const std::string& shard : shards) {
    auto f = SafetensorsFile::open(shard);
    if (!f) return f.status();
    c.files_.push_back(std::move(*f));
  }
  for (const SafetensorsFile& f : c.files_)
    for (const SafetensorsTensor& t : f.tensors())
      if (!c.index_.emplace(t.name, &t).second)
        return invalid_argument(
            str("checkpoint '", path, "': tensor '", t.name, "' appears in two files"));
  return c;
}

const SafetensorsTensor* SafetensorsCheckpoint::find(std::string_view tensor) const {
  const auto it = index_.find(tensor);
  return it == index_.end() ? nullptr : it->second;
}

std::vector<std::string> SafetensorsCheckpoint::names() const {
  std::vector<std::string> out;
  for (const auto& [name, t] : index_) out.push_back(name);
  return out;
}

}  // namespace qgemm
