#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx-data.pb.h>

#include "ortkit/tensor/npy.h"
#include "ortkit/tensor/npz.h"
#include "ortkit/tensor/tensor_proto.h"
#include "ortkit/tensor/test_case.h"
#include "tensor_fuzz_body.h"
#include "test_models.h"

namespace ortkit {
namespace {

namespace fs = std::filesystem;

// gmock is not linked; this is HasSubstr with the whole text in the failure message.
::testing::AssertionResult Contains(const char* text_expr, const char* part_expr, const std::string& text,
                                    const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text_expr << " does not contain " << part_expr << "\n  text: " << text
                                       << "\n  part: " << part;
}
#define EXPECT_CONTAINS(text, part) EXPECT_PRED_FORMAT2(Contains, text, part)

using testing::ReadFile;

fs::path Fixture(const std::string& name) { return testing::SourcePath("tests/data/npy/" + name); }

std::string Replace(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// A tensor whose element i holds a value distinct per element and exact in its type.
Tensor Sample(DataType type, std::vector<std::int64_t> shape) {
  Tensor t = std::move(Tensor::Allocate(type, std::move(shape)).value());
  for (std::int64_t i = 0; i < t.element_count(); ++i) {
    if (t.is_string())
      t.strings()[static_cast<std::size_t>(i)] = "s" + std::to_string(i);
    else if (type == DataType::kBool)
      t.SetFromDouble(i, i % 3 == 0);
    else
      t.SetFromDouble(i, FindDataType(type)->is_signed ? (i % 7) - 3.0 : i % 11);
  }
  return t;
}

void ExpectSameTensor(const Tensor& actual, const Tensor& expected, const std::string& context) {
  ASSERT_EQ(actual.type(), expected.type()) << context;
  ASSERT_EQ(actual.shape(), expected.shape()) << context;
  if (expected.is_string()) {
    EXPECT_EQ(actual.strings(), expected.strings()) << context;
  } else {
    ASSERT_EQ(actual.byte_size(), expected.byte_size()) << context;
    EXPECT_EQ(std::memcmp(actual.data(), expected.data(), expected.byte_size()), 0) << context;
  }
}

// Every value is its C-order index: the fixtures hold np.arange(n) reshaped.
void ExpectArange(const Tensor& t, const std::string& context) {
  for (std::int64_t i = 0; i < t.element_count(); ++i)
    ASSERT_EQ(t.AsDouble(i), static_cast<double>(i)) << context << " at " << i;
}

std::vector<DataType> NumpyTypes() {
  std::vector<DataType> types;
  for (const DataTypeInfo* info : AllDataTypes()) {
    if (!info->numpy_descr.empty()) types.push_back(info->type);
  }
  return types;
}

std::string ErrorOf(const auto& result) { return result.ok() ? std::string("<no error>") : result.error().message; }

// ---------------------------------------------------------------------------------------------
// .npy

TEST(Npy, RoundTripsEveryNumpyTypeAndShape) {
  testing::TempDir dir;
  const std::vector<std::vector<std::int64_t>> shapes = {{}, {0}, {0, 3}, {5}, {2, 3}, {2, 1, 3, 2}};
  ASSERT_EQ(NumpyTypes().size(), 12u);
  for (DataType type : NumpyTypes()) {
    for (const auto& shape : shapes) {
      const Tensor original = Sample(type, shape);
      const std::string context = original.Describe();
      const fs::path path = dir.path() / "t.npy";
      ASSERT_TRUE(WriteNpy(path, original).ok()) << context;
      auto read = ReadNpy(path);
      ASSERT_TRUE(read.ok()) << context << ": " << ErrorOf(read);
      ExpectSameTensor(*read, original, context);
    }
  }
}

TEST(Npy, WritesTheSameBytesAsNumpy) {
  for (DataType type : NumpyTypes()) {
    if (type == DataType::kBool) continue;  // the fixture holds a pattern, not arange
    Tensor t = Sample(type, {2, 3});
    for (std::int64_t i = 0; i < 6; ++i) t.SetFromDouble(i, static_cast<double>(i));
    const std::string descr(FindDataType(type)->numpy_descr);
    auto encoded = EncodeNpy(t);
    ASSERT_TRUE(encoded.ok());
    EXPECT_EQ(*encoded, ReadFile(Fixture("dtype_" + descr.substr(1) + ".npy"))) << descr;
  }
}

TEST(Npy, ReadsNumpyFixturesOfEveryType) {
  for (DataType type : NumpyTypes()) {
    const std::string descr(FindDataType(type)->numpy_descr);
    auto t = ReadNpy(Fixture("dtype_" + descr.substr(1) + ".npy"));
    ASSERT_TRUE(t.ok()) << descr << ": " << ErrorOf(t);
    EXPECT_EQ(t->type(), type);
    EXPECT_EQ(t->shape(), (std::vector<std::int64_t>{2, 3}));
    if (type == DataType::kBool) {
      EXPECT_EQ(std::vector<std::uint8_t>(t->values<std::uint8_t>().begin(), t->values<std::uint8_t>().end()),
                (std::vector<std::uint8_t>{1, 0, 1, 0, 1, 0}));
    } else {
      ExpectArange(*t, descr);
    }
  }
}

TEST(Npy, ReadsHeaderVersionsTwoAndThree) {
  auto v2 = ReadNpy(Fixture("version_2_0.npy"));
  ASSERT_TRUE(v2.ok()) << ErrorOf(v2);
  EXPECT_EQ(v2->Describe(), "int16[2, 3]");
  ExpectArange(*v2, "v2");
  auto v3 = ReadNpy(Fixture("version_3_0.npy"));
  ASSERT_TRUE(v3.ok()) << ErrorOf(v3);
  EXPECT_EQ(v3->Describe(), "float64[2, 3]");
  ExpectArange(*v3, "v3");
}

TEST(Npy, ConvertsBigEndianAndFortranOrder) {
  for (const auto& [file, described] :
       std::map<std::string, std::string>{{"big_endian_f4.npy", "float32[2, 3]"},
                                          {"big_endian_i8.npy", "int64[2, 3]"},
                                          {"big_endian_f2.npy", "float16[2, 3]"},
                                          {"fortran_f8.npy", "float64[2, 3, 4]"},
                                          {"fortran_big_endian_i4.npy", "int32[2, 3]"}}) {
    auto t = ReadNpy(Fixture(file));
    ASSERT_TRUE(t.ok()) << file << ": " << ErrorOf(t);
    EXPECT_EQ(t->Describe(), described) << file;
    ExpectArange(*t, file);
  }
}

TEST(Npy, ReadsScalarsAndZeroSizeArrays) {
  auto scalar = ReadNpy(Fixture("scalar_0d.npy"));
  ASSERT_TRUE(scalar.ok()) << ErrorOf(scalar);
  EXPECT_EQ(scalar->Describe(), "float32[]");
  EXPECT_EQ(scalar->AsDouble(0), 3.5);
  auto empty = ReadNpy(Fixture("zero_size.npy"));
  ASSERT_TRUE(empty.ok()) << ErrorOf(empty);
  EXPECT_EQ(empty->Describe(), "int32[0, 3]");
  EXPECT_EQ(empty->element_count(), 0);
}

TEST(Npy, RefusesWhatItCannotHoldAndSaysWhat) {
  const std::map<std::string, std::vector<std::string>> expected = {
      {"object.npy", {"Python objects", "'|O'"}},
      {"unicode.npy", {"unicode strings", "'<U3'"}},
      {"complex64.npy", {"complex numbers", "'<c8'"}},
      {"structured.npy", {"structured array with fields 'a', 'b'"}},
  };
  for (const auto& [file, phrases] : expected) {
    auto t = ReadNpy(Fixture(file));
    ASSERT_FALSE(t.ok()) << file;
    EXPECT_CONTAINS(t.error().message, file);
    for (const auto& phrase : phrases) EXPECT_CONTAINS(t.error().message, phrase) << file;
  }
}

// An .npy with a hand-written header dict (padded like numpy's) and `data` after it.
std::string HandMadeNpy(const std::string& dict, std::string_view data, int major = 1) {
  std::string header = dict;
  const std::size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes("\x93NUMPY", 6);
  bytes += static_cast<char>(major);
  bytes += '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i) bytes += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return bytes + header + std::string(data);
}

TEST(Npy, AcceptsNativeOrderMarksAndPython2Headers) {
  const std::string four_floats(16, '\0');
  for (const std::string& dict : {
           std::string("{'descr': '=f4', 'fortran_order': False, 'shape': (4,), }"),
           std::string("{'descr': 'f4', 'fortran_order': False, 'shape': (2, 2)}"),
           std::string("{u'descr': u'<f4', u'fortran_order': False, u'shape': (2L, 2L), }"),
           std::string("{\"shape\": [4], \"fortran_order\": False, \"descr\": \"<f4\"}"),
       }) {
    auto t = ParseNpy(HandMadeNpy(dict, four_floats), "hand.npy");
    ASSERT_TRUE(t.ok()) << dict << ": " << ErrorOf(t);
    EXPECT_EQ(t->element_count(), 4) << dict;
    EXPECT_EQ(t->type(), DataType::kFloat32) << dict;
  }
  auto boolean = ParseNpy(
      HandMadeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}", std::string("\x00\x01\x07", 3)), "b.npy");
  ASSERT_TRUE(boolean.ok()) << ErrorOf(boolean);
  EXPECT_EQ(boolean->AsDouble(2), 1.0);
  EXPECT_EQ(boolean->values<std::uint8_t>()[2], 1) << "bool bytes are normalised to 0/1";
}

TEST(Npy, TruncationIsReportedWhereItHappens) {
  const std::string bytes = ReadFile(Fixture("dtype_f8.npy"));  // 128-byte header, 48 bytes of data
  ASSERT_EQ(bytes.size(), 176u);
  const std::map<std::size_t, std::string> cuts = {
      {0, "the file is empty"},
      {4, "inside the .npy magic and version"},
      {9, "inside the header length"},
      {60, "the header says it is 118 bytes long but the file ends 50 bytes into it"},
      {128, "header says shape (2, 3) float64 = 48 bytes of data but the file holds 0"},
      {150, "header says shape (2, 3) float64 = 48 bytes of data but the file holds 22"},
      {175, "header says shape (2, 3) float64 = 48 bytes of data but the file holds 47"},
  };
  for (const auto& [cut, phrase] : cuts) {
    auto t = ParseNpy(std::string_view(bytes).substr(0, cut), "cut.npy");
    ASSERT_FALSE(t.ok()) << cut;
    EXPECT_CONTAINS(t.error().message, "cut.npy: ") << cut;
    EXPECT_CONTAINS(t.error().message, phrase) << cut;
  }
  auto longer = ParseNpy(bytes + "abcd", "long.npy");
  ASSERT_FALSE(longer.ok());
  EXPECT_CONTAINS(longer.error().message, "the file holds 52: 4 bytes more than the shape needs");
}

TEST(Npy, TruncatedFileOnDiskIsReportedWithTheSizes) {
  testing::TempDir dir;
  const std::string bytes = ReadFile(Fixture("dtype_f4.npy"));
  const fs::path path = dir.Write("x.npy", std::string_view(bytes).substr(0, bytes.size() - 4));
  auto t = ReadNpy(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message,
            path.string() + ": header says shape (2, 3) float32 = 24 bytes of data but the file holds 20");
  EXPECT_EQ(ReadNpy(dir.path() / "missing.npy").error().kind, ErrorKind::kNotFound);
  EXPECT_CONTAINS(ReadNpy(dir.path()).error().message, "is a folder");
}

TEST(Npy, GarbageHeadersGiveSpecificErrors) {
  const std::map<std::string, std::string> headers = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", "header ends where a value should be"},
      {"{'descr': '<f4'}", "has no 'fortran_order' key"},
      {"[1, 2]", "not a dict"},
      {"{'descr': '<f4', 'fortran_order': 'no', 'shape': (2,)}", "'fortran_order' is 'no'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "negative dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", "integer too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1e3,)}", "expected an integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 6}", "'shape' is 6, not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ('a',)}", "not a tuple of integers"},
      {"{'descr': 7, 'fortran_order': False, 'shape': (2,)}", "'descr' is 7"},
      {"{'descr': '<f16', 'fortran_order': False, 'shape': (2,)}", "extended-precision"},
      {"{'descr': '<q9', 'fortran_order': False, 'shape': (2,)}", "element type it does not know"},
      {"{'descr': '', 'fortran_order': False, 'shape': (2,)}", "is empty"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} trailing", "unexpected text after the dict"},
      {"{'descr: '<f4'}", "expected ':' after a key"},
      {std::string(100, '(') + std::string(100, ')'), "nested too deeply"},
      {"\xff\xfe\x00garbage", "expected a value"},
      {"{'shape': ((((1,),),),), 'descr': '<f4', 'fortran_order': True}", "not a tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::string(65 * 3, '1').replace(0, 0, "") + ")}",
       "integer too large"},
  };
  for (const auto& [dict, phrase] : headers) {
    auto t = ParseNpy(HandMadeNpy(dict, ""), "bad.npy");
    ASSERT_FALSE(t.ok()) << dict;
    EXPECT_CONTAINS(t.error().message, phrase) << dict;
  }
  std::string many_dims = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 70; ++i) many_dims += "1, ";
  many_dims += ")}";
  EXPECT_CONTAINS(ErrorOf(ParseNpy(HandMadeNpy(many_dims, ""), "dims.npy")), "70 dimensions");
  EXPECT_CONTAINS(ErrorOf(ParseNpy("PK\x03\x04 not npy", "z.npy")), "a zip archive: an .npz?");
  EXPECT_CONTAINS(ErrorOf(ParseNpy(std::string("\x93NUMPY\x05\x00", 8), "v.npy")), "version 5.0");
  std::string huge_header("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
  EXPECT_CONTAINS(ErrorOf(ParseNpy(huge_header, "h.npy")), "ortkit reads headers up to");
}

TEST(Npy, AbsurdShapesFailBeforeAllocating) {
  EXPECT_CONTAINS(
      ErrorOf(
          ParseNpy(HandMadeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776, 1099511627776)}", ""),
                   "a.npy")),
      "too many elements");
  EXPECT_CONTAINS(
      ErrorOf(ParseNpy(HandMadeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}", ""),
                       "b.npy")),
      "overflows");
  // 400 GB claimed, 8 bytes given: refused from the sizes alone.
  EXPECT_CONTAINS(
      ErrorOf(ParseNpy(HandMadeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000,)}", "12345678"),
                       "c.npy")),
      "= 400000000000 bytes of data but the file holds 8");
  // A zero dimension makes the rest irrelevant.
  auto zero =
      ParseNpy(HandMadeNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (0, 4611686018427387904)}", ""), "d.npy");
  ASSERT_TRUE(zero.ok()) << ErrorOf(zero);
  EXPECT_EQ(zero->element_count(), 0);
}

TEST(Npy, RefusesToWriteTypesNumpyLacks) {
  testing::TempDir dir;
  EXPECT_CONTAINS(ErrorOf(WriteNpy(dir.path() / "s.npy", Sample(DataType::kString, {2}))), "string tensor");
  EXPECT_CONTAINS(ErrorOf(WriteNpy(dir.path() / "b.npy", Sample(DataType::kBFloat16, {2}))), "bfloat16");
}

// ---------------------------------------------------------------------------------------------
// .npz

void ExpectFixtureMembers(const Result<std::vector<NamedTensor>>& members, const std::string& context) {
  ASSERT_TRUE(members.ok()) << context << ": " << ErrorOf(members);
  ASSERT_EQ(members->size(), 2u) << context;
  EXPECT_EQ((*members)[0].name, "a");
  EXPECT_EQ((*members)[0].tensor.Describe(), "float32[2, 3]");
  ExpectArange((*members)[0].tensor, context);
  EXPECT_EQ((*members)[1].name, "b");
  EXPECT_EQ((*members)[1].tensor.Describe(), "int64[3]");
  EXPECT_EQ((*members)[1].tensor.AsDouble(2), 9);
}

TEST(Npz, ReadsNumpySavezAndSavezCompressed) {
  ExpectFixtureMembers(ReadNpz(Fixture("stored.npz")), "stored");
  ExpectFixtureMembers(ReadNpz(Fixture("compressed.npz")), "compressed");
  ExpectFixtureMembers(ParseNpz(ReadFile(Fixture("compressed.npz")), "memory.npz"), "in memory");
}

TEST(Npz, RoundTripsEveryNumpyTypeStoredAndDeflated) {
  testing::TempDir dir;
  std::vector<NamedTensor> tensors;
  for (DataType type : NumpyTypes()) tensors.push_back({std::string(DataTypeName(type)), Sample(type, {3, 4})});
  tensors.push_back({"scalar", Sample(DataType::kFloat32, {})});
  tensors.push_back({"empty", Sample(DataType::kInt64, {0, 2})});
  for (NpzCompression compression : {NpzCompression::kStored, NpzCompression::kDeflated}) {
    const fs::path path = dir.path() / "all.npz";
    ASSERT_TRUE(WriteNpz(path, tensors, compression).ok());
    auto read = ReadNpz(path);
    ASSERT_TRUE(read.ok()) << ErrorOf(read);
    ASSERT_EQ(read->size(), tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      EXPECT_EQ((*read)[i].name, tensors[i].name);
      ExpectSameTensor((*read)[i].tensor, tensors[i].tensor, tensors[i].name);
    }
  }
}

TEST(Npz, DeflatedArchivesAreCompressedAndMembersAreNumpyNpy) {
  testing::TempDir dir;
  std::vector<NamedTensor> zeros;
  zeros.push_back({"z", std::move(Tensor::Zeros(DataType::kFloat32, {256, 1024}).value())});
  ASSERT_TRUE(WriteNpz(dir.path() / "stored.npz", zeros, NpzCompression::kStored).ok());
  ASSERT_TRUE(WriteNpz(dir.path() / "deflated.npz", zeros, NpzCompression::kDeflated).ok());
  EXPECT_GT(fs::file_size(dir.path() / "stored.npz"), 1u << 20);
  EXPECT_LT(fs::file_size(dir.path() / "deflated.npz"), 10u << 10);
  // A stored member is the .npy bytes verbatim, as numpy writes them.
  const std::string archive = ReadFile(dir.path() / "stored.npz");
  const std::string npy = EncodeNpy(zeros[0].tensor).value();
  EXPECT_NE(archive.find(npy.substr(0, 128)), std::string::npos);
  auto read = ReadNpz(dir.path() / "deflated.npz");
  ASSERT_TRUE(read.ok()) << ErrorOf(read);
  EXPECT_EQ((*read)[0].tensor.Describe(), "float32[256, 1024]");
}

TEST(Npz, WriterRefusesBadNames) {
  testing::TempDir dir;
  std::vector<NamedTensor> twice;
  twice.push_back({"x", Sample(DataType::kFloat32, {1})});
  twice.push_back({"x", Sample(DataType::kFloat32, {1})});
  EXPECT_CONTAINS(ErrorOf(WriteNpz(dir.path() / "t.npz", twice)), "two tensors are named 'x'");
  std::vector<NamedTensor> strings;
  strings.push_back({"s", Sample(DataType::kString, {1})});
  EXPECT_CONTAINS(ErrorOf(WriteNpz(dir.path() / "s.npz", strings)), "tensor 's'");
}

TEST(Npz, CorruptArchivesGiveSpecificErrors) {
  const std::string stored = ReadFile(Fixture("stored.npz"));
  const std::string compressed = ReadFile(Fixture("compressed.npz"));
  EXPECT_CONTAINS(ErrorOf(ParseNpz("this is not a zip file at all", "bad.npz")),
                  "bad.npz: not a readable .npz (zip) archive");
  EXPECT_CONTAINS(ErrorOf(ParseNpz("", "empty.npz")), "empty.npz: ");
  EXPECT_CONTAINS(ErrorOf(ParseNpz(stored.substr(0, stored.size() / 2), "half.npz")),
                  "half.npz: starts like a zip archive but "
                  "its central directory (at the end) is "
                  "missing or damaged");
  EXPECT_CONTAINS(ErrorOf(ParseNpz(ReadFile(Fixture("dtype_f4.npy")), "npy.npz")),
                  "npy.npz: is an .npy file, not an .npz");
  EXPECT_CONTAINS(ErrorOf(ParseNpz(Replace(stored, "a.npy", "a.txt"), "txt.npz")),
                  "txt.npz:a.txt: member is not an .npy file");
  EXPECT_CONTAINS(ErrorOf(ParseNpz(Replace(stored, "'<f4'", "'<U1'"), "unicode.npz")),
                  "unicode.npz:a.npy: holds unicode strings");
  EXPECT_CONTAINS(ErrorOf(ParseNpz(Replace(stored, "'shape': (2, 3)", "'shape': (2, 4)"), "shape.npz")),
                  "shape.npz:a.npy: header says shape (2, 4) float32 = 32 bytes of data but the file holds 24");
  // Flip bytes inside the first member's deflated data (local header 30 bytes + "a.npy" + zip64 extra).
  std::string damaged = compressed;
  for (std::size_t i = 60; i < 90; ++i) damaged[i] = static_cast<char>(damaged[i] ^ 0x5A);
  auto result = ParseNpz(damaged, "damaged.npz");
  ASSERT_FALSE(result.ok());
  EXPECT_CONTAINS(result.error().message, "damaged.npz:a.npy: ");
  // Stored data changed behind the CRC's back: the header reads, the CRC check at the end fails.
  std::string flipped = stored;
  const std::size_t data = flipped.find("\n", flipped.find("'descr': '<f4'")) + 1;
  flipped[data + 3] = static_cast<char>(flipped[data + 3] ^ 0x01);
  EXPECT_CONTAINS(ErrorOf(ParseNpz(flipped, "crc.npz")), "crc.npz:a.npy: the member's data is corrupt");
  testing::TempDir dir;
  EXPECT_EQ(ReadNpz(dir.path() / "missing.npz").error().kind, ErrorKind::kNotFound);
  EXPECT_CONTAINS(ErrorOf(ReadNpz(dir.Write("bad.npz", "garbage"))), "not a readable .npz");
}

// Little-endian 32-bit field of a zip record.
void Put32(std::string& bytes, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[at + static_cast<std::size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xFF);
}

TEST(Npz, SizesTheDirectoryLiesAboutAreRefusedBeforeAllocating) {
  testing::TempDir dir;
  std::vector<NamedTensor> one;
  one.push_back({"x", Sample(DataType::kFloat32, {2, 3})});
  for (NpzCompression compression : {NpzCompression::kStored, NpzCompression::kDeflated}) {
    ASSERT_TRUE(WriteNpz(dir.path() / "one.npz", one, compression).ok());
    const std::string archive = ReadFile(dir.path() / "one.npz");
    const std::size_t central = archive.find("PK\x01\x02");
    ASSERT_EQ(archive.substr(0, 4), "PK\x03\x04");
    ASSERT_NE(central, std::string::npos);
    // Claim 256 MiB uncompressed (and, for the stored member, compressed) in both headers.
    std::string lying = archive;
    Put32(lying, 22, 1u << 28);
    Put32(lying, central + 24, 1u << 28);
    if (compression == NpzCompression::kStored) {
      Put32(lying, 18, 1u << 28);
      Put32(lying, central + 20, 1u << 28);
    }
    auto result = ParseNpz(lying, "lying.npz");
    ASSERT_FALSE(result.ok());
    EXPECT_CONTAINS(result.error().message, "lying.npz");
    if (compression == NpzCompression::kDeflated) {
      EXPECT_CONTAINS(result.error().message, "exceeds deflate's 1032:1 maximum");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// TensorProto

TEST(TensorProto, RoundTripsEveryTypeThroughRawData) {
  testing::TempDir dir;
  for (const DataTypeInfo* info : AllDataTypes()) {
    for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{}, {0, 2}, {2, 3}}) {
      const Tensor original = Sample(info->type, shape);
      const fs::path path = dir.path() / "t.pb";
      ASSERT_TRUE(WriteTensorProto(path, original, "x").ok());
      auto read = ReadTensorProto(path);
      ASSERT_TRUE(read.ok()) << original.Describe() << ": " << ErrorOf(read);
      EXPECT_EQ(read->name, "x");
      ExpectSameTensor(read->tensor, original, original.Describe());
    }
  }
  auto proto = TensorToProto(Sample(DataType::kFloat32, {2}), "y");
  ASSERT_TRUE(proto.ok());
  EXPECT_TRUE(proto->has_raw_data());
  EXPECT_EQ(proto->float_data_size(), 0);
}

onnx::TensorProto Proto(int data_type, std::vector<std::int64_t> dims) {
  onnx::TensorProto proto;
  proto.set_name("t");
  proto.set_data_type(data_type);
  for (auto d : dims) proto.add_dims(d);
  return proto;
}

TEST(TensorProto, ReadsEveryTypedField) {
  auto f = Proto(onnx::TensorProto::FLOAT, {2});
  f.add_float_data(1.5f);
  f.add_float_data(-2);
  EXPECT_EQ(TensorFromProto(f, "f")->AsDouble(1), -2);

  auto i8 = Proto(onnx::TensorProto::INT8, {2});
  i8.add_int32_data(-128);
  i8.add_int32_data(127);
  EXPECT_EQ(TensorFromProto(i8, "i8")->AsDouble(0), -128);

  auto u16 = Proto(onnx::TensorProto::UINT16, {1});
  u16.add_int32_data(65535);
  EXPECT_EQ(TensorFromProto(u16, "u16")->AsDouble(0), 65535);

  auto b = Proto(onnx::TensorProto::BOOL, {3});
  for (int v : {0, 1, 1}) b.add_int32_data(v);
  EXPECT_EQ(TensorFromProto(b, "b")->AsDouble(2), 1);

  auto half = Proto(onnx::TensorProto::FLOAT16, {2});
  half.add_int32_data(FloatToHalf(-1.5f));
  half.add_int32_data(FloatToHalf(0.25f));
  auto half_tensor = TensorFromProto(half, "half");
  ASSERT_TRUE(half_tensor.ok()) << ErrorOf(half_tensor);
  EXPECT_EQ(half_tensor->AsDouble(0), -1.5);
  EXPECT_EQ(half_tensor->AsDouble(1), 0.25);

  auto bf = Proto(onnx::TensorProto::BFLOAT16, {1});
  bf.add_int32_data(FloatToBFloat16(3.0f));
  EXPECT_EQ(TensorFromProto(bf, "bf")->AsDouble(0), 3.0);

  auto i64 = Proto(onnx::TensorProto::INT64, {1});
  i64.add_int64_data(-1234567890123LL);
  EXPECT_EQ(TensorFromProto(i64, "i64")->values<std::int64_t>()[0], -1234567890123LL);

  auto d = Proto(onnx::TensorProto::DOUBLE, {1});
  d.add_double_data(0.1);
  EXPECT_EQ(TensorFromProto(d, "d")->AsDouble(0), 0.1);

  auto u32 = Proto(onnx::TensorProto::UINT32, {1});
  u32.add_uint64_data(4000000000u);
  EXPECT_EQ(TensorFromProto(u32, "u32")->AsDouble(0), 4000000000.0);

  auto u64 = Proto(onnx::TensorProto::UINT64, {1});
  u64.add_uint64_data(18446744073709551615ull);
  EXPECT_EQ(TensorFromProto(u64, "u64")->values<std::uint64_t>()[0], 18446744073709551615ull);

  auto s = Proto(onnx::TensorProto::STRING, {2});
  s.add_string_data("hello");
  s.add_string_data(std::string("\0bin", 4));
  auto strings = TensorFromProto(s, "s");
  ASSERT_TRUE(strings.ok()) << ErrorOf(strings);
  EXPECT_EQ(strings->strings()[1], std::string("\0bin", 4));
}

TEST(TensorProto, ReportsMismatchesAndRefusals) {
  auto short_floats = Proto(onnx::TensorProto::FLOAT, {2, 3});
  for (int i = 0; i < 5; ++i) short_floats.add_float_data(1);
  EXPECT_EQ(ErrorOf(TensorFromProto(short_floats, "in.pb")),
            "in.pb (tensor 't'): dims [2, 3] float32 need 6 values but float_data holds 5 (float_data holds 5)");

  auto wrong_field = Proto(onnx::TensorProto::FLOAT, {2});
  wrong_field.add_int32_data(1);
  wrong_field.add_int32_data(2);
  EXPECT_CONTAINS(ErrorOf(TensorFromProto(wrong_field, "w.pb")), "float_data holds 0 (int32_data holds 2)");

  auto short_raw = Proto(onnx::TensorProto::INT64, {3});
  short_raw.set_raw_data(std::string(20, '\0'));
  EXPECT_CONTAINS(ErrorOf(TensorFromProto(short_raw, "r.pb")), "dims [3] int64 need 24 bytes but raw_data holds 20");

  auto out_of_range = Proto(onnx::TensorProto::UINT8, {1});
  out_of_range.add_int32_data(300);
  EXPECT_CONTAINS(ErrorOf(TensorFromProto(out_of_range, "o.pb")), "int32_data[0] = 300 is out of range for uint8");

  auto external = Proto(onnx::TensorProto::FLOAT, {4});
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = external.add_external_data();
  entry->set_key("location");
  entry->set_value("weights.bin");
  EXPECT_CONTAINS(ErrorOf(TensorFromProto(external, "e.pb")), "keeps its data in an external file ('weights.bin')");

  EXPECT_CONTAINS(ErrorOf(TensorFromProto(Proto(onnx::TensorProto::COMPLEX64, {1}), "c.pb")),
                  "complex64 is not one ortkit handles");
  EXPECT_CONTAINS(ErrorOf(TensorFromProto(Proto(0, {1}), "u.pb")), "UNDEFINED");
  EXPECT_CONTAINS(ErrorOf(TensorFromProto(Proto(onnx::TensorProto::FLOAT, {2, -1}), "n.pb")), "negative dimension");
  EXPECT_CONTAINS(ErrorOf(TensorFromProto(Proto(onnx::TensorProto::FLOAT, {1LL << 40, 1LL << 40}), "h.pb")),
                  "too many elements");

  auto segment = Proto(onnx::TensorProto::FLOAT, {1});
  segment.mutable_segment()->set_begin(0);
  segment.mutable_segment()->set_end(1);
  EXPECT_CONTAINS(ErrorOf(TensorFromProto(segment, "s.pb")), "segment [0, 1)");
}

TEST(TensorProto, CorruptFilesGiveSpecificErrors) {
  auto proto = TensorToProto(Sample(DataType::kFloat32, {4, 4}), "x");
  const std::string bytes = proto->SerializeAsString();
  EXPECT_CONTAINS(ErrorOf(ParseTensorProto("", "e.pb")), "e.pb: the file is empty");
  for (std::size_t cut : {std::size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    auto t = ParseTensorProto(std::string_view(bytes).substr(0, cut), "cut.pb");
    ASSERT_FALSE(t.ok()) << cut;
    EXPECT_CONTAINS(t.error().message, "cut.pb") << cut;
  }
  EXPECT_CONTAINS(ErrorOf(ParseTensorProto("\xff\xff\xff\xff garbage", "g.pb")), "g.pb: not a TensorProto");
  testing::TempDir dir;
  EXPECT_CONTAINS(ErrorOf(ReadTensorProto(dir.Write("half.pb", bytes.substr(0, bytes.size() - 7)))), "half.pb");
  EXPECT_EQ(ReadTensorProto(dir.path() / "missing.pb").error().kind, ErrorKind::kNotFound);
}

TEST(TensorProto, RecognisesSequenceProtos) {
  onnx::SequenceProto sequence;
  sequence.set_name("seq");
  sequence.set_elem_type(onnx::SequenceProto::TENSOR);
  for (int i = 0; i < 3; ++i)
    *sequence.add_tensor_values() = TensorToProto(Sample(DataType::kFloat32, {2}), "").value();
  auto t = ParseTensorProto(sequence.SerializeAsString(), "seq.pb");
  ASSERT_FALSE(t.ok());
  EXPECT_CONTAINS(t.error().message,
                  "seq.pb: holds an ONNX SequenceProto or OptionalProto named 'seq' with 3 tensor value(s)");
}

// Every .pb of ONNX's own node tests reads, or is refused for a reason this list names.
TEST(TensorProto, ReadsEveryOnnxNodeTestFile) {
  const fs::path root = "/usr/share/libonnx-testdata/data/node";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is not installed";
  int read = 0;
  std::map<std::string, int> refused;
  for (const auto& test : fs::directory_iterator(root)) {
    const fs::path data_set = test.path() / "test_data_set_0";
    if (!fs::is_directory(data_set)) continue;
    for (const auto& file : fs::directory_iterator(data_set)) {
      if (file.path().extension() != ".pb") continue;
      auto t = ReadTensorProto(file.path());
      if (t.ok()) {
        ++read;
        continue;
      }
      const std::string& message = t.error().message;
      std::string reason = "other";
      for (const char* known : {"SequenceProto", "MapProto", "is not one ortkit handles"}) {
        if (message.find(known) != std::string::npos) reason = known;
      }
      EXPECT_NE(reason, "other") << message;
      ++refused[reason];
    }
  }
  int refusals = 0;
  for (const auto& [reason, count] : refused) refusals += count;
  std::cout << "[ ortkit   ] ONNX node test .pb files: " << read << " read, " << refusals << " refused";
  for (const auto& [reason, count] : refused) std::cout << ", " << count << " " << reason;
  std::cout << "\n";
  EXPECT_GT(read, 2500);
  EXPECT_LT(refusals, 200);
}

// ---------------------------------------------------------------------------------------------
// Test cases and folders

TEST(OnnxTestCase, ReadsAnOnnxNodeTest) {
  const fs::path folder = "/usr/share/libonnx-testdata/data/node/test_add";
  if (!fs::exists(folder)) GTEST_SKIP() << folder << " is not installed";
  auto test_case = ReadTestCase(folder);
  ASSERT_TRUE(test_case.ok()) << ErrorOf(test_case);
  EXPECT_EQ(test_case->model, folder / "model.onnx");
  ASSERT_EQ(test_case->data_sets.size(), 1u);
  const TestDataSet& set = test_case->data_sets[0];
  ASSERT_EQ(set.inputs.size(), 2u);
  EXPECT_EQ(set.inputs[0].name, "x");
  EXPECT_EQ(set.inputs[1].name, "y");
  EXPECT_TRUE(set.input_name_given[0]);
  ASSERT_EQ(set.outputs.size(), 1u);
  EXPECT_EQ(set.outputs[0].name, "sum");
  EXPECT_EQ(set.outputs[0].tensor.Describe(), "float32[3, 4, 5]");
  // The data is what Add computes.
  for (std::int64_t i = 0; i < 60; ++i) {
    EXPECT_FLOAT_EQ(set.outputs[0].tensor.AsDouble(i),
                    set.inputs[0].tensor.AsDouble(i) + set.inputs[1].tensor.AsDouble(i));
  }
}

TEST(OnnxTestCase, WritesAndReadsDataSetsWithUnnamedTensors) {
  testing::TempDir dir;
  dir.Write("model.onnx", "not parsed here");
  std::vector<NamedTensor> inputs;
  inputs.push_back({"", Sample(DataType::kFloat32, {2, 2})});
  inputs.push_back({"mask", Sample(DataType::kBool, {2})});
  std::vector<NamedTensor> outputs;
  outputs.push_back({"", Sample(DataType::kInt64, {3})});
  for (int n : {0, 1, 2, 10}) {
    ASSERT_TRUE(WriteTestDataSet(dir.path() / ("test_data_set_" + std::to_string(n)), inputs, outputs).ok());
  }
  auto test_case = ReadTestCase(dir.path());
  ASSERT_TRUE(test_case.ok()) << ErrorOf(test_case);
  ASSERT_EQ(test_case->data_sets.size(), 4u);
  EXPECT_EQ(test_case->data_sets[3].folder.filename(), "test_data_set_10");
  const TestDataSet& set = test_case->data_sets[0];
  EXPECT_EQ(set.inputs[0].name, "input_0");
  EXPECT_FALSE(set.input_name_given[0]);
  EXPECT_EQ(set.inputs[1].name, "mask");
  EXPECT_TRUE(set.input_name_given[1]);
  EXPECT_EQ(set.outputs[0].name, "output_0");
  EXPECT_FALSE(set.output_name_given[0]);
  ExpectSameTensor(set.inputs[1].tensor, inputs[1].tensor, "mask");
}

TEST(OnnxTestCase, ReportsBrokenLayouts) {
  testing::TempDir dir;
  EXPECT_CONTAINS(ErrorOf(ReadTestCase(dir.path())), "no model.onnx");
  dir.Write("model.onnx", "x");
  EXPECT_CONTAINS(ErrorOf(ReadTestCase(dir.path())), "no test_data_set_N folders");
  std::vector<NamedTensor> three;
  for (int i = 0; i < 3; ++i) three.push_back({"t" + std::to_string(i), Sample(DataType::kFloat32, {1})});
  ASSERT_TRUE(WriteTestDataSet(dir.path() / "test_data_set_0", three, {}).ok());
  fs::remove(dir.path() / "test_data_set_0" / "input_1.pb");
  EXPECT_CONTAINS(ErrorOf(ReadTestCase(dir.path())), "has input_2.pb but no input_1.pb");
  dir.Write("test_data_set_0/input_1.pb", "\x0a\x03garbage");
  EXPECT_CONTAINS(ErrorOf(ReadTestCase(dir.path())), "input_1.pb");
  EXPECT_EQ(ReadTestCase(dir.path() / "nope").error().kind, ErrorKind::kNotFound);
}

TEST(ReadTensors, DispatchesOnWhatThePathIs) {
  testing::TempDir dir;
  const Tensor a = Sample(DataType::kFloat32, {2});
  const Tensor b = Sample(DataType::kInt32, {3});
  fs::create_directories(dir.path() / "npy");
  fs::create_directories(dir.path() / "pbs");
  ASSERT_TRUE(WriteNpy(dir.path() / "npy" / "a.npy", a).ok());
  ASSERT_TRUE(WriteNpy(dir.path() / "npy" / "b10.npy", b).ok());
  ASSERT_TRUE(WriteNpy(dir.path() / "npy" / "b9.npy", b).ok());
  dir.Write("npy/README.txt", "ignored");

  auto one = ReadTensors(dir.path() / "npy" / "a.npy");
  ASSERT_TRUE(one.ok()) << ErrorOf(one);
  EXPECT_EQ((*one)[0].name, "a");

  auto folder = ReadTensors(dir.path() / "npy");
  ASSERT_TRUE(folder.ok()) << ErrorOf(folder);
  ASSERT_EQ(folder->size(), 3u);
  EXPECT_EQ((*folder)[1].name, "b9");
  EXPECT_EQ((*folder)[2].name, "b10");

  auto npz = ReadTensors(Fixture("compressed.npz"));
  ASSERT_TRUE(npz.ok()) << ErrorOf(npz);
  EXPECT_EQ(npz->size(), 2u);

  std::vector<NamedTensor> inputs;
  inputs.push_back({"", a.Clone()});
  inputs.push_back({"second", b.Clone()});
  std::vector<NamedTensor> outputs;
  outputs.push_back({"out", a.Clone()});
  ASSERT_TRUE(WriteTestDataSet(dir.path() / "set", inputs, outputs).ok());
  auto set = ReadTensors(dir.path() / "set");
  ASSERT_TRUE(set.ok()) << ErrorOf(set);
  ASSERT_EQ(set->size(), 2u) << "a data set folder gives its inputs only";
  EXPECT_EQ((*set)[0].name, "input_0");
  EXPECT_EQ((*set)[1].name, "second");

  auto pb = ReadTensors(dir.path() / "set" / "input_0.pb");
  ASSERT_TRUE(pb.ok()) << ErrorOf(pb);
  EXPECT_EQ((*pb)[0].name, "input_0");

  ASSERT_TRUE(WriteTensorProto(dir.path() / "pbs" / "z.pb", a, "").ok());
  ASSERT_TRUE(WriteTensorProto(dir.path() / "pbs" / "y.pb", b, "named").ok());
  auto pbs = ReadTensors(dir.path() / "pbs");
  ASSERT_TRUE(pbs.ok()) << ErrorOf(pbs);
  ASSERT_EQ(pbs->size(), 2u);
  EXPECT_EQ((*pbs)[0].name, "named");
  EXPECT_EQ((*pbs)[1].name, "z");

  fs::copy_file(Fixture("dtype_f4.npy"), dir.path() / "sniffed.bin");
  auto sniffed = ReadTensors(dir.path() / "sniffed.bin");
  ASSERT_TRUE(sniffed.ok()) << ErrorOf(sniffed);
  EXPECT_EQ((*sniffed)[0].tensor.Describe(), "float32[2, 3]");

  fs::copy_file(Fixture("dtype_f4.npy"), dir.path() / "pbs" / "mixed.npy");
  EXPECT_CONTAINS(ErrorOf(ReadTensors(dir.path() / "pbs")), "mixes 1 .npy and 2 .pb files");
  EXPECT_CONTAINS(ErrorOf(ReadTensors(dir.Write("what.txt", "hello"))), "neither its extension nor its first bytes");
  fs::create_directories(dir.path() / "empty");
  EXPECT_CONTAINS(ErrorOf(ReadTensors(dir.path() / "empty")), "holds no .npy or .pb files");
  EXPECT_EQ(ReadTensors(dir.path() / "missing").error().kind, ErrorKind::kNotFound);
}

// The fuzzer's seeds and every input it ever crashed on, through the fuzzer's own body.
TEST(TensorReaders, ReplayFuzzCorpus) {
  int replayed = 0;
  for (const char* folder : {"fuzz/tensor_corpus", "fuzz/tensor_regressions"}) {
    const fs::path root = testing::SourcePath(folder);
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::directory_iterator(root)) {
      SCOPED_TRACE(entry.path().string());
      fuzz::RunTensorFuzzBody(ReadFile(entry.path()));
      ++replayed;
    }
  }
  EXPECT_GE(replayed, 17);
}

// A cheap stand-in for the fuzzer in every CI run: random byte damage never crashes a reader.
TEST(TensorReaders, SurviveRandomDamage) {
  std::mt19937 random(1234);
  const std::vector<std::string> seeds = {ReadFile(Fixture("fortran_f8.npy")), ReadFile(Fixture("compressed.npz")),
                                          ReadFile(Fixture("stored.npz")),
                                          TensorToProto(Sample(DataType::kInt8, {3, 3}), "x")->SerializeAsString()};
  int failures = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = seeds[static_cast<std::size_t>(round) % seeds.size()];
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits; ++e) bytes[random() % bytes.size()] = static_cast<char>(random() & 0xFF);
    if (random() % 4 == 0) bytes.resize(random() % bytes.size());
    failures += !ParseNpy(bytes, "f.npy").ok();
    failures += !ParseNpz(bytes, "f.npz").ok();
    failures += !ParseTensorProto(bytes, "f.pb").ok();
  }
  EXPECT_GT(failures, 3000);
}

// The header of each member is shown to the caller before the member is inflated: a member whose
// shape cannot fit the model is refused at the cost of its header.
TEST(Npz, HeaderCheckRunsBeforeTheDataIsRead) {
  testing::TempDir dir;
  std::vector<NamedTensor> tensors;
  tensors.push_back({"x", Tensor::Zeros(DataType::kFloat32, {64, 1024}).value()});
  const auto path = dir.path() / "x.npz";
  ASSERT_TRUE(WriteNpz(path, tensors, NpzCompression::kDeflated).ok());
  std::vector<std::string> seen;
  HeaderCheck refuse = [&](std::string_view name, DataType type, std::span<const std::int64_t> shape) -> Status {
    seen.push_back(fmt::format("{} {}{}", name, DataTypeName(type), ShapeToString(shape)));
    return MakeError(ErrorKind::kInvalidArgument, "refused by the check");
  };
  auto read = ReadNpz(path, refuse);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message, "refused by the check");
  EXPECT_EQ(seen, std::vector<std::string>{"x float32[64, 1024]"});
  auto through = ReadTensors(path, refuse);
  ASSERT_FALSE(through.ok());
  EXPECT_EQ(through.error().message, "refused by the check");
  EXPECT_TRUE(
      ReadTensors(path, [](std::string_view, DataType, std::span<const std::int64_t>) { return OkStatus(); }).ok());
}

// A named pipe would block the reader forever: refused by type, never opened.
TEST(TensorFiles, RefuseSpecialFilesWithoutOpeningThem) {
  testing::TempDir dir;
  const auto pipe = dir.path() / "x.npz";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  for (const auto& error : {ReadNpz(pipe).error(), ReadTensors(pipe).error()}) {
    EXPECT_EQ(error.kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(error.message.find("is a named pipe (FIFO)"), std::string::npos) << error.message;
  }
  EXPECT_NE(ReadNpy("/dev/zero").error().message.find("is a character device"), std::string::npos);
}

}  // namespace
}  // namespace ortkit
