#include "ortkit/tensor/npy.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <system_error>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ortkit/core/files.h"

namespace ortkit {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kPrefixBytes = 8;  // magic and two version bytes
constexpr int kMaxLiteralDepth = 16;
// numpy 2 allows 64 dimensions; more would only serve to make the transposition loop slow.
constexpr std::size_t kMaxDims = 64;
constexpr bool kLittleEndianHost = std::endian::native == std::endian::little;

// A byte string shown to people: printable ASCII as is, the rest as \xNN, cut at `limit` bytes.
std::string Printable(std::string_view bytes, std::size_t limit = 24) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7F)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (bytes.size() > limit) out += "...";
  return out;
}

// numpy's spelling of a shape, as in the header: (), (5,), (2, 3).
std::string PythonShape(const std::vector<std::int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// ---------------------------------------------------------------------------------------------
// The header dict is a Python literal. This parser understands the subset numpy writes (dicts,
// tuples, lists, strings, integers, True/False/None) and fails with a position on anything else.

struct Literal {
  enum class Kind { kString, kInteger, kBool, kNone, kTuple, kList, kDict };
  Kind kind = Kind::kNone;
  std::string text;
  std::int64_t integer = 0;
  bool boolean = false;
  std::vector<Literal> items;  ///< kTuple and kList: the elements; kDict: key, value, key, value...
};

class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : text_(text) {}

  Result<Literal> ParseAll() {
    ORTKIT_ASSIGN_OR_RETURN(Literal value, ParseValue(0));
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected text after the dict");
    return value;
  }

 private:
  Error Fail(std::string_view what) const {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{} at offset {} (near '{}')", what, pos_,
                                                              Printable(text_.substr(std::min(pos_, text_.size())))));
  }

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  Result<Literal> ParseValue(int depth) {
    if (depth > kMaxLiteralDepth) return Fail("nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("the header ends where a value should be");
    const char c = text_[pos_];
    if (c == '{') return ParseDict(depth);
    if (c == '(') return ParseSequence(')', Literal::Kind::kTuple, depth);
    if (c == '[') return ParseSequence(']', Literal::Kind::kList, depth);
    if (c == '\'' || c == '"') return ParseString();
    if ((c == 'u' || c == 'b') && pos_ + 1 < text_.size() && (text_[pos_ + 1] == '\'' || text_[pos_ + 1] == '"')) {
      ++pos_;  // Python 2 era u'...' and b'...' prefixes
      return ParseString();
    }
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return ParseInteger();
    for (auto [word, kind, value] :
         {std::tuple{"True", Literal::Kind::kBool, true}, std::tuple{"False", Literal::Kind::kBool, false},
          std::tuple{"None", Literal::Kind::kNone, false}}) {
      if (text_.substr(pos_).starts_with(word)) {
        pos_ += std::string_view(word).size();
        Literal literal;
        literal.kind = kind;
        literal.boolean = value;
        return literal;
      }
    }
    return Fail("expected a value");
  }

  Result<Literal> ParseString() {
    const char quote = text_[pos_++];
    Literal literal;
    literal.kind = Literal::Kind::kString;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      literal.text += text_[pos_++];
    }
    if (pos_ >= text_.size()) return Fail("unterminated string");
    ++pos_;
    return literal;
  }

  Result<Literal> ParseInteger() {
    const std::size_t start = pos_;
    const bool negative = text_[pos_] == '-';
    if (text_[pos_] == '-' || text_[pos_] == '+') ++pos_;
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') return Fail("expected digits");
    std::uint64_t magnitude = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const unsigned digit = static_cast<unsigned>(text_[pos_] - '0');
      if (magnitude > (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - digit) / 10) {
        pos_ = start;
        return Fail("integer too large");
      }
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    if (Peek('L') || Peek('l')) ++pos_;  // Python 2 long suffix, as in old files' shapes "(2L, 3L)"
    if (Peek('.') || Peek('e') || Peek('E') || Peek('j')) return Fail("expected an integer");
    Literal literal;
    literal.kind = Literal::Kind::kInteger;
    literal.integer = negative ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
    return literal;
  }

  // Python's rule: "(x)" is x itself, "(x,)" and "()" are tuples.
  Result<Literal> ParseSequence(char close, Literal::Kind kind, int depth) {
    ++pos_;
    Literal literal;
    literal.kind = kind;
    bool saw_comma = false;
    while (true) {
      SkipSpace();
      if (Peek(close)) break;
      ORTKIT_ASSIGN_OR_RETURN(Literal item, ParseValue(depth + 1));
      literal.items.push_back(std::move(item));
      SkipSpace();
      if (Peek(',')) {
        ++pos_;
        saw_comma = true;
        continue;
      }
      if (!Peek(close)) return Fail(fmt::format("expected ',' or '{}'", close));
    }
    ++pos_;
    if (kind == Literal::Kind::kTuple && literal.items.size() == 1 && !saw_comma) return std::move(literal.items[0]);
    return literal;
  }

  Result<Literal> ParseDict(int depth) {
    ++pos_;
    Literal literal;
    literal.kind = Literal::Kind::kDict;
    while (true) {
      SkipSpace();
      if (Peek('}')) break;
      ORTKIT_ASSIGN_OR_RETURN(Literal key, ParseValue(depth + 1));
      SkipSpace();
      if (!Peek(':')) return Fail("expected ':' after a key");
      ++pos_;
      ORTKIT_ASSIGN_OR_RETURN(Literal value, ParseValue(depth + 1));
      literal.items.push_back(std::move(key));
      literal.items.push_back(std::move(value));
      SkipSpace();
      if (Peek(',')) {
        ++pos_;
        continue;
      }
      if (!Peek('}')) return Fail("expected ',' or '}'");
    }
    ++pos_;
    return literal;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

const Literal* DictValue(const Literal& dict, std::string_view key) {
  for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    if (dict.items[i].kind == Literal::Kind::kString && dict.items[i].text == key) return &dict.items[i + 1];
  }
  return nullptr;
}

std::string LiteralToString(const Literal& literal, int depth = 0) {
  if (depth > kMaxLiteralDepth) return "...";
  switch (literal.kind) {
    case Literal::Kind::kString: return "'" + Printable(literal.text, 40) + "'";
    case Literal::Kind::kInteger: return std::to_string(literal.integer);
    case Literal::Kind::kBool: return literal.boolean ? "True" : "False";
    case Literal::Kind::kNone: return "None";
    default: break;
  }
  std::vector<std::string> parts;
  const std::size_t step = literal.kind == Literal::Kind::kDict ? 2 : 1;
  for (std::size_t i = 0; i < literal.items.size() && parts.size() < 8; i += step) {
    std::string part = LiteralToString(literal.items[i], depth + 1);
    if (step == 2) part += ": " + LiteralToString(literal.items[i + 1], depth + 1);
    parts.push_back(std::move(part));
  }
  if (parts.size() * step < literal.items.size()) parts.emplace_back("...");
  const std::string inner = fmt::format("{}", fmt::join(parts, ", "));
  if (literal.kind == Literal::Kind::kDict) return "{" + inner + "}";
  if (literal.kind == Literal::Kind::kList) return "[" + inner + "]";
  return "(" + inner + (literal.items.size() == 1 ? ",)" : ")");
}

// ---------------------------------------------------------------------------------------------
// dtype strings: an optional byte-order mark, a kind letter and a size ("<f4", "|b1", ">i8", "f8").

struct RefusedKind {
  char kind;
  std::string_view holds;
  std::string_view advice;
};

// clang-format off
constexpr std::array kRefusedKinds = std::to_array<RefusedKind>({
  {'O', "Python objects (stored as a pickle)", "save a numeric array, e.g. np.asarray(x, dtype=np.float32)"},
  {'U', "unicode strings",                     "feed string inputs as a .pb TensorProto"},
  {'S', "byte strings",                        "feed string inputs as a .pb TensorProto"},
  {'a', "byte strings",                        "feed string inputs as a .pb TensorProto"},
  {'c', "complex numbers",                     "save the real and imaginary parts as two float arrays"},
  {'V', "raw void records",                    "save a numeric array"},
  {'M', "datetimes",                           "save them as int64 (e.g. x.astype('int64'))"},
  {'m', "timedeltas",                          "save them as int64 (e.g. x.astype('int64'))"},
});
// clang-format on

struct NpyLayout {
  const DataTypeInfo* info = nullptr;
  bool byte_swap = false;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

Status InterpretDescr(const Literal& descr, std::string_view name, NpyLayout& layout) {
  if (descr.kind == Literal::Kind::kList) {
    std::vector<std::string> fields;
    for (const Literal& field : descr.items) {
      if (!field.items.empty() && field.items[0].kind == Literal::Kind::kString)
        fields.push_back("'" + Printable(field.items[0].text) + "'");
    }
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: holds a structured array with fields {} (descr {}); ortkit reads plain numeric "
                                 "arrays only: save each field as its own array (np.savez)",
                                 name, fmt::join(fields, ", "), LiteralToString(descr)));
  }
  if (descr.kind != Literal::Kind::kString) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: header's 'descr' is {}, not a dtype string such as '<f4'", name, LiteralToString(descr)));
  }
  std::string_view text = descr.text;
  char order = '=';
  if (!text.empty() && (text[0] == '<' || text[0] == '>' || text[0] == '=' || text[0] == '|')) {
    order = text[0];
    text.remove_prefix(1);
  }
  if (text == "?") text = "b1";
  const std::string quoted = "'" + Printable(descr.text) + "'";
  if (text.empty())
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: header's dtype {} is empty", name, quoted));
  for (const RefusedKind& refused : kRefusedKinds) {
    if (text[0] == refused.kind) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("{}: holds {} (dtype {}); ortkit reads numeric and bool arrays only: {}", name,
                                   refused.holds, quoted, refused.advice));
    }
  }
  const std::string little = "<" + std::string(text);
  layout.info = FindDataTypeByNumpy(little);
  if (layout.info == nullptr) {
    const bool float_kind = text[0] == 'f';
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: holds {} (dtype {}); ortkit reads {}", name,
                                 float_kind ? "extended-precision floats" : "an element type it does not know", quoted,
                                 "float16/32/64, int8-64, uint8-64 and bool"));
  }
  const bool big_endian = order == '>' || (order == '=' && !kLittleEndianHost) || (order == '|' && !kLittleEndianHost);
  layout.byte_swap = layout.info->size > 1 && big_endian == kLittleEndianHost;
  return OkStatus();
}

Result<NpyLayout> InterpretHeader(std::string_view header, std::string_view name) {
  LiteralParser parser(header);
  auto parsed = parser.ParseAll();
  if (!parsed.ok()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: header dict does not parse: {}", name, parsed.error().message));
  }
  const Literal& dict = *parsed;
  if (dict.kind != Literal::Kind::kDict) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: header is {}, not a dict with 'descr', 'fortran_order' and 'shape'", name,
                                 LiteralToString(dict)));
  }
  const Literal* descr = DictValue(dict, "descr");
  const Literal* fortran = DictValue(dict, "fortran_order");
  const Literal* shape = DictValue(dict, "shape");
  for (auto [value, key] :
       {std::pair{descr, "descr"}, std::pair{fortran, "fortran_order"}, std::pair{shape, "shape"}}) {
    if (value == nullptr) {
      return MakeError(ErrorKind::kInvalidArgument,
                       fmt::format("{}: header dict {} has no '{}' key", name, LiteralToString(dict), key));
    }
  }
  NpyLayout layout;
  ORTKIT_RETURN_IF_ERROR(InterpretDescr(*descr, name, layout));
  if (fortran->kind != Literal::Kind::kBool) {
    return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: header's 'fortran_order' is {}, not True or False",
                                                              name, LiteralToString(*fortran)));
  }
  layout.fortran_order = fortran->boolean;
  const bool sequence = shape->kind == Literal::Kind::kTuple || shape->kind == Literal::Kind::kList;
  const bool all_integers = sequence && std::all_of(shape->items.begin(), shape->items.end(),
                                                    [](const Literal& d) { return d.kind == Literal::Kind::kInteger; });
  if (!all_integers) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: header's 'shape' is {}, not a tuple of integers", name, LiteralToString(*shape)));
  }
  if (shape->items.size() > kMaxDims) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: header's shape has {} dimensions; numpy allows at most {}", name,
                                 shape->items.size(), kMaxDims));
  }
  for (const Literal& d : shape->items) layout.shape.push_back(d.integer);
  return layout;
}

// ---------------------------------------------------------------------------------------------

Result<std::size_t> ReadFully(const ByteReader& read, std::byte* destination, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    ORTKIT_ASSIGN_OR_RETURN(std::size_t n, read(destination + done, size - done));
    if (n == 0) break;
    done += std::min(n, size - done);
  }
  return done;
}

std::uint32_t LittleEndianAt(const unsigned char* p, int bytes) {
  std::uint32_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

template <typename T>
void TransposeFromFortran(const T* source, T* destination, const std::vector<std::int64_t>& shape, std::int64_t count) {
  const std::size_t rank = shape.size();
  if (count == 0) return;
  if (rank < 2) {
    std::copy(source, source + count, destination);
    return;
  }
  // Column-major strides: the first index moves fastest in the file.
  std::vector<std::int64_t> stride(rank, 1);
  for (std::size_t k = 1; k < rank; ++k) stride[k] = stride[k - 1] * shape[k - 1];
  std::vector<std::int64_t> index(rank, 0);
  const std::int64_t last = shape[rank - 1];
  const std::int64_t last_stride = stride[rank - 1];
  std::int64_t offset = 0;
  for (std::int64_t out = 0; out < count; out += last) {
    for (std::int64_t j = 0; j < last; ++j) destination[out + j] = source[offset + j * last_stride];
    for (std::size_t k = rank - 1; k-- > 0;) {
      offset += stride[k];
      if (++index[k] < shape[k]) break;
      offset -= stride[k] * shape[k];
      index[k] = 0;
    }
  }
}

void TransposeFromFortran(const Tensor& source, Tensor& destination) {
  const auto& shape = source.shape();
  const std::int64_t count = source.element_count();
  switch (FindDataType(source.type())->size) {
    case 1:
      TransposeFromFortran(reinterpret_cast<const std::uint8_t*>(source.data()),
                           reinterpret_cast<std::uint8_t*>(destination.data()), shape, count);
      break;
    case 2:
      TransposeFromFortran(reinterpret_cast<const std::uint16_t*>(source.data()),
                           reinterpret_cast<std::uint16_t*>(destination.data()), shape, count);
      break;
    case 4:
      TransposeFromFortran(reinterpret_cast<const std::uint32_t*>(source.data()),
                           reinterpret_cast<std::uint32_t*>(destination.data()), shape, count);
      break;
    default:
      TransposeFromFortran(reinterpret_cast<const std::uint64_t*>(source.data()),
                           reinterpret_cast<std::uint64_t*>(destination.data()), shape, count);
      break;
  }
}

void SwapBytes(Tensor& tensor) {
  switch (FindDataType(tensor.type())->size) {
    case 2:
      for (auto& v : tensor.values<std::uint16_t>()) v = __builtin_bswap16(v);
      break;
    case 4:
      for (auto& v : tensor.values<std::uint32_t>()) v = __builtin_bswap32(v);
      break;
    case 8:
      for (auto& v : tensor.values<std::uint64_t>()) v = __builtin_bswap64(v);
      break;
    default: break;
  }
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Where the header dict lies: after the magic, the version and the length field.
struct NpyPrefix {
  std::uint32_t header_length = 0;
  std::uint64_t header_start = 0;
};

// Reads and checks the magic, the version and the header length.
Result<NpyPrefix> ReadNpyPrefix(const ByteReader& read, std::string_view name) {
  std::array<unsigned char, kPrefixBytes + 4> prefix{};
  auto* prefix_bytes = reinterpret_cast<std::byte*>(prefix.data());
  ORTKIT_ASSIGN_OR_RETURN(std::size_t got, ReadFully(read, prefix_bytes, kPrefixBytes));
  const std::string_view start(reinterpret_cast<const char*>(prefix.data()), got);
  if (got == 0) return MakeError(ErrorKind::kInvalidArgument, fmt::format("{}: the file is empty", name));
  if (!kMagic.starts_with(start.substr(0, std::min(got, kMagic.size())))) {
    const bool zip = start.starts_with("PK");
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: not an .npy file: it starts with '{}' where .npy files start with '\\x93NUMPY'{}",
                                 name, Printable(start), zip ? " (it is a zip archive: an .npz?)" : ""));
  }
  if (got < kPrefixBytes) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: truncated: the file ends after {} bytes, inside the .npy magic and version", name, got));
  }
  const int major = prefix[6];
  const int minor = prefix[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: .npy format version {}.{}; ortkit reads versions 1.0, 2.0 and 3.0", name, major, minor));
  }
  const int length_bytes = major == 1 ? 2 : 4;
  ORTKIT_ASSIGN_OR_RETURN(got, ReadFully(read, prefix_bytes + kPrefixBytes, static_cast<std::size_t>(length_bytes)));
  if (got < static_cast<std::size_t>(length_bytes)) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: truncated: the file ends after {} bytes, inside the header length", name, kPrefixBytes + got));
  }
  return NpyPrefix{LittleEndianAt(prefix.data() + kPrefixBytes, length_bytes),
                   kPrefixBytes + static_cast<std::uint64_t>(length_bytes)};
}

// The header dict's text, bounded in length and checked against the stream's size before it is read.
Result<std::string> ReadNpyHeader(const ByteReader& read, const NpyPrefix& prefix, std::uint64_t stream_size,
                                  std::string_view name) {
  const std::uint64_t data_start = prefix.header_start + prefix.header_length;
  if (prefix.header_length > kMaxNpyHeaderBytes) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: header claims to be {} bytes long; ortkit reads headers up to {} bytes", name,
                                 prefix.header_length, kMaxNpyHeaderBytes));
  }
  if (data_start > stream_size) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: truncated: the header says it is {} bytes long but the file ends {} bytes into it", name,
                    prefix.header_length, stream_size - std::min(stream_size, prefix.header_start)));
  }
  std::string header(prefix.header_length, '\0');
  ORTKIT_ASSIGN_OR_RETURN(std::size_t got, ReadFully(read, reinterpret_cast<std::byte*>(header.data()), header.size()));
  if (got < header.size()) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: truncated: the header says it is {} bytes long but the file ends after {} of them", name,
                    prefix.header_length, got));
  }
  return header;
}

// The data the header promises against what the stream holds, named in every message about sizes.
struct NpyDataSize {
  std::string_view name;
  const NpyLayout* layout = nullptr;
  std::uint64_t bytes = 0;        // what the shape and element type need
  std::uint64_t stream_size = 0;  // what the whole stream declared

  Error Mismatch(std::uint64_t holds) const {
    const std::string extra = holds > bytes ? fmt::format(": {} bytes more than the shape needs", holds - bytes) : "";
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: header says shape {} {} = {} bytes of data but the file holds {}{}", name,
                                 PythonShape(layout->shape), layout->info->name, bytes, holds, extra));
  }
};

// The data size `layout` implies, refused when it overflows or differs from the `available` bytes.
Result<NpyDataSize> CheckDataSize(const NpyLayout& layout, std::uint64_t available, std::uint64_t stream_size,
                                  std::string_view name) {
  auto count = ElementCountOf(layout.shape);
  const auto element_size = static_cast<std::uint64_t>(layout.info->size);
  if (!count.ok() || static_cast<std::uint64_t>(*count) > std::numeric_limits<std::uint64_t>::max() / element_size) {
    return MakeError(ErrorKind::kInvalidArgument,
                     fmt::format("{}: header says shape {}, {}", name, PythonShape(layout.shape),
                                 count.ok() ? "whose size in bytes overflows" : count.error().message));
  }
  const NpyDataSize size{name, &layout, static_cast<std::uint64_t>(*count) * element_size, stream_size};
  if (available != size.bytes) return size.Mismatch(available);
  return size;
}

// Allocates the tensor and reads its data into it; Fortran-ordered data lands in a second buffer
// and is transposed into the first. A stream that ends early or runs on past the data is refused.
Result<Tensor> ReadNpyData(const ByteReader& read, const NpyDataSize& size) {
  const NpyLayout& layout = *size.layout;
  const std::string_view name = size.name;
  auto allocated = Tensor::Allocate(layout.info->type, layout.shape);
  if (!allocated.ok()) return MakeError(allocated.error().kind, fmt::format("{}: {}", name, allocated.error().message));
  Tensor tensor = std::move(allocated).value();
  const bool transpose = layout.fortran_order && layout.shape.size() > 1;
  Tensor fortran_data;
  if (transpose) {
    auto second = Tensor::Allocate(layout.info->type, layout.shape);
    if (!second.ok())
      return MakeError(second.error().kind,
                       fmt::format("{}: transposing a Fortran-order array: {}", name, second.error().message));
    fortran_data = std::move(second).value();
  }
  Tensor& landing = transpose ? fortran_data : tensor;
  ORTKIT_ASSIGN_OR_RETURN(std::size_t got, ReadFully(read, landing.data(), static_cast<std::size_t>(size.bytes)));
  if (got < size.bytes) return size.Mismatch(got);
  std::byte extra{};
  ORTKIT_ASSIGN_OR_RETURN(got, ReadFully(read, &extra, 1));
  if (got != 0) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format("{}: header says shape {} {} = {} bytes of data but the file runs on past them (it declared "
                    "{} bytes in all)",
                    name, PythonShape(layout.shape), layout.info->name, size.bytes, size.stream_size));
  }
  if (transpose) TransposeFromFortran(fortran_data, tensor);
  return tensor;
}

// Native byte order, and bools as numpy means them: any non-zero byte is true.
void Normalize(const NpyLayout& layout, Tensor& tensor) {
  if (layout.byte_swap) SwapBytes(tensor);
  if (tensor.type() == DataType::kBool) {
    for (auto& b : tensor.values<std::uint8_t>()) b = b != 0 ? 1 : 0;
  }
}

}  // namespace

Result<Tensor> ReadNpyStream(const ByteReader& read, std::uint64_t stream_size, std::string_view name,
                             const HeaderCheck& check, std::string_view tensor_name) {
  ORTKIT_ASSIGN_OR_RETURN(const NpyPrefix prefix, ReadNpyPrefix(read, name));
  ORTKIT_ASSIGN_OR_RETURN(const std::string header, ReadNpyHeader(read, prefix, stream_size, name));
  ORTKIT_ASSIGN_OR_RETURN(const NpyLayout layout, InterpretHeader(header, name));
  if (check) ORTKIT_RETURN_IF_ERROR(check(tensor_name, layout.info->type, layout.shape));
  const std::uint64_t data_start = prefix.header_start + prefix.header_length;
  ORTKIT_ASSIGN_OR_RETURN(const NpyDataSize size, CheckDataSize(layout, stream_size - data_start, stream_size, name));
  ORTKIT_ASSIGN_OR_RETURN(Tensor tensor, ReadNpyData(read, size));
  Normalize(layout, tensor);
  return tensor;
}

Result<Tensor> ParseNpy(std::string_view bytes, std::string_view name) {
  std::size_t position = 0;
  ByteReader read = [&](std::byte* destination, std::size_t size) -> Result<std::size_t> {
    const std::size_t n = std::min(size, bytes.size() - position);
    if (n > 0) std::memcpy(destination, bytes.data() + position, n);
    position += n;
    return n;
  };
  return ReadNpyStream(read, bytes.size(), name);
}

Result<Tensor> ReadNpy(const std::filesystem::path& path, const HeaderCheck& check) {
  const std::string name = path.string();
  ORTKIT_ASSIGN_OR_RETURN(const std::uint64_t size, RegularFileSize(path, "an .npy file"));
  File file(std::fopen(name.c_str(), "rb"));
  if (file == nullptr) return MakeError(ErrorKind::kIo, fmt::format("{}: cannot open: {}", name, std::strerror(errno)));
  ByteReader read = [&](std::byte* destination, std::size_t n) -> Result<std::size_t> {
    const std::size_t got = std::fread(destination, 1, n, file.get());
    if (got < n && std::ferror(file.get())) {
      return MakeError(ErrorKind::kIo, fmt::format("{}: read failed: {}", name, std::strerror(errno)));
    }
    return got;
  };
  return ReadNpyStream(read, size, name, check, path.stem().string());
}

Result<std::string> NpyHeaderFor(const Tensor& tensor) {
  const DataTypeInfo* info = FindDataType(tensor.type());
  if (info == nullptr || info->numpy_descr.empty()) {
    return MakeError(
        ErrorKind::kInvalidArgument,
        fmt::format(
            "cannot write a {} tensor as .npy: numpy has no such numeric dtype; write a .pb TensorProto instead",
            DataTypeName(tensor.type())));
  }
  std::string descr(info->numpy_descr);
  if (descr[0] == '<' && !kLittleEndianHost) descr[0] = '>';
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, PythonShape(tensor.shape()));
  // numpy pads with spaces and ends with '\n' so that the data starts on a 64-byte boundary.
  const auto padded_length = [&](std::size_t prefix) { return (prefix + dict.size() + 1 + 63) / 64 * 64 - prefix; };
  int major = 1;
  std::size_t length = padded_length(kPrefixBytes + 2);
  if (length > std::numeric_limits<std::uint16_t>::max()) {
    major = 2;
    length = padded_length(kPrefixBytes + 4);
  }
  dict.resize(length - 1, ' ');
  dict += '\n';
  std::string header(kMagic);
  header += static_cast<char>(major);
  header += '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) header += static_cast<char>((length >> (8 * i)) & 0xFF);
  return header + dict;
}

Result<std::string> EncodeNpy(const Tensor& tensor) {
  ORTKIT_ASSIGN_OR_RETURN(std::string bytes, NpyHeaderFor(tensor));
  bytes.append(reinterpret_cast<const char*>(tensor.data()), tensor.byte_size());
  return bytes;
}

Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor) {
  const std::string name = path.string();
  auto header = NpyHeaderFor(tensor);
  if (!header.ok()) return MakeError(header.error().kind, fmt::format("{}: {}", name, header.error().message));
  File file(std::fopen(name.c_str(), "wb"));
  if (file == nullptr)
    return MakeError(ErrorKind::kIo, fmt::format("{}: cannot create: {}", name, std::strerror(errno)));
  const bool written = std::fwrite(header->data(), 1, header->size(), file.get()) == header->size() &&
                       std::fwrite(tensor.data(), 1, tensor.byte_size(), file.get()) == tensor.byte_size();
  std::FILE* raw = file.release();
  if (std::fclose(raw) != 0 || !written) {
    return MakeError(ErrorKind::kIo, fmt::format("{}: write failed: {}", name, std::strerror(errno)));
  }
  return OkStatus();
}

}  // namespace ortkit
