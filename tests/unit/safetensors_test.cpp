// The safetensors reader on well-formed and malformed files: every malformed one is a clear error
// naming the file and the tensor.
#include "io/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace qgemm {
namespace {

namespace fs = std::filesystem;

// A safetensors file: 8-byte little-endian header length, the header, the data.
std::vector<uint8_t> file_bytes(const std::string& header, const std::vector<uint8_t>& data) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = char(uint64_t(header.size()) >> (8 * i));
  bytes += header;
  bytes.append(data.begin(), data.end());
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

const std::string kTwoTensors =
    R"({"__metadata__": {"format": "pt"},
        "b": {"dtype": "I32", "shape": [2], "data_offsets": [8, 16]},
        "a": {"dtype": "F16", "shape": [2, 2], "data_offsets": [0, 8]}})";

std::vector<uint8_t> sixteen_bytes() {
  std::vector<uint8_t> d(16);
  for (int i = 0; i < 16; ++i) d[i] = uint8_t(i);
  return d;
}

TEST(Safetensors, ReadsTensorsMetadataAndBytes) {
  auto f = SafetensorsFile::parse(file_bytes(kTwoTensors, sixteen_bytes()), "two.safetensors");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  ASSERT_EQ(f->tensors().size(), 2u);
  EXPECT_EQ(f->tensors()[0].name, "a");  // in data order
  const SafetensorsTensor* b = f->find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, "I32");
  EXPECT_EQ(b->shape, std::vector<int64_t>{2});
  EXPECT_EQ(b->bytes, 8);
  EXPECT_EQ(b->data[0], 8);
  EXPECT_EQ(f->find("a")->elements(), 4);
  EXPECT_EQ(f->metadata().at("format"), "pt");
  EXPECT_EQ(f->find("c"), nullptr);
}

struct Malformed {
  const char* name;
  std::vector<uint8_t> bytes;
  const char* message_part;
};

TEST(Safetensors, MalformedFilesAreClearErrors) {
  const std::vector<uint8_t> data = sixteen_bytes();
  std::vector<uint8_t> too_long = file_bytes(kTwoTensors, data);
  too_long[0] = 0xff, too_long[5] = 0x01;
  const std::vector<uint8_t> whole = file_bytes(kTwoTensors, data);
  const Malformed cases[] = {
      {"empty", {}, "shorter than the 8-byte header length"},
      {"header past the file", too_long, "exceeds the file"},
      {"truncated data", std::vector<uint8_t>(whole.begin(), whole.end() - 4),
       "tensor 'b': data_offsets [8, 16) run past the end of the data (12 bytes)"},
      {"not JSON", file_bytes("{\"a\": ", data), "the header is not JSON"},
      {"not an object", file_bytes("[1, 2]", data), "not a JSON object"},
      {"deep nesting", file_bytes(std::string(100, '[') + std::string(100, ']'), data),
       "nests deeper than 16"},
      {"unknown dtype",
       file_bytes(R"({"w": {"dtype": "F12", "shape": [1], "data_offsets": [0, 2]}})", data),
       "tensor 'w': unknown dtype 'F12'"},
      {"size against offsets",
       file_bytes(R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", data),
       "tensor 'w': F32 [3] is 12 bytes, but data_offsets [0, 8) hold 8"},
      {"overlap",
       file_bytes(R"({"x": {"dtype": "U8", "shape": [8], "data_offsets": [0, 8]},
                      "y": {"dtype": "U8", "shape": [8], "data_offsets": [4, 12]}})",
                  data),
       "tensors 'x' and 'y' overlap"},
      {"negative size",
       file_bytes(R"({"w": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 0]}})", data),
       "tensor 'w': shape holds -1"},
      {"shape overflow",
       file_bytes(
           R"({"w": {"dtype": "F64", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})",
           data),
       "overflows 64 bits"},
      {"reversed offsets",
       file_bytes(R"({"w": {"dtype": "U8", "shape": [0], "data_offsets": [8, 4]}})", data),
       "begin <= end"},
      {"missing offsets", file_bytes(R"({"w": {"dtype": "U8", "shape": [0]}})", data),
       "needs dtype, shape and data_offsets"},
      {"metadata value", file_bytes(R"({"__metadata__": {"k": 1}})", data),
       "__metadata__ value 'k' is not a string"},
  };
  for (const Malformed& c : cases) {
    auto f = SafetensorsFile::parse(c.bytes, "bad.safetensors");
    ASSERT_FALSE(f.ok()) << c.name;
    EXPECT_EQ(f.status().code(), ErrorCode::kInvalidArgument) << c.name;
    EXPECT_NE(f.status().message().find("safetensors file 'bad.safetensors'"), std::string::npos)
        << c.name << ": " << f.status().message();
    EXPECT_NE(f.status().message().find(c.message_part), std::string::npos)
        << c.name << ": '" << f.status().message() << "' lacks '" << c.message_part << "'";
  }
}

class TempDirectory {
 public:
  TempDirectory() {
    path_ = fs::temp_directory_path() /
            ("qgemm-st-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDirectory() { fs::remove_all(path_); }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

void write(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

TEST(Safetensors, ShardedCheckpointsLookUpTensorsAcrossFiles) {
  TempDirectory dir;
  write(dir / "model-00001-of-00002.safetensors", file_bytes(kTwoTensors, sixteen_bytes()));
  write(dir / "model-00002-of-00002.safetensors",
        file_bytes(R"({"c": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}})",
                   sixteen_bytes()));
  std::ofstream(dir / "model.safetensors.index.json")
      << R"({"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors",
            "b": "model-00001-of-00002.safetensors", "c": "model-00002-of-00002.safetensors"}})";
  auto c = SafetensorsCheckpoint::open(dir.path());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->names(), (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_NE(c->find("c"), nullptr);
  EXPECT_EQ(c->find("c")->dtype, "BF16");
  EXPECT_EQ(c->find("zz"), nullptr);

  // A single file works as a checkpoint too.
  auto one = SafetensorsCheckpoint::open((dir / "model-00002-of-00002.safetensors").string());
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  EXPECT_EQ(one->names(), std::vector<std::string>{"c"});
}

TEST(Safetensors, BadCheckpointsAreClearErrors) {
  TempDirectory empty;
  auto none = SafetensorsCheckpoint::open(empty.path());
  EXPECT_EQ(none.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(none.status().message().find("neither model.safetensors"), std::string::npos);

  TempDirectory escape;
  std::ofstream(escape / "model.safetensors.index.json")
      << R"({"weight_map": {"a": "../../etc/passwd"}})";
  auto bad = SafetensorsCheckpoint::open(escape.path());
  EXPECT_NE(bad.status().message().find("not a file name"), std::string::npos)
      << bad.status().message();

  TempDirectory twice;
  write(twice / "x.safetensors", file_bytes(kTwoTensors, sixteen_bytes()));
  write(twice / "y.safetensors", file_bytes(kTwoTensors, sixteen_bytes()));
  std::ofstream(twice / "model.safetensors.index.json")
      << R"({"weight_map": {"a": "x.safetensors", "b": "y.safetensors"}})";
  auto dup = SafetensorsCheckpoint::open(twice.path());
  EXPECT_NE(dup.status().message().find("appears in two files"), std::string::npos)
      << dup.status().message();

  auto missing = SafetensorsCheckpoint::open((twice / "nope.safetensors").string());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.status().message().find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace qgemm
