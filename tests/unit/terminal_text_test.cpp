// Text from models made safe for a terminal (core/terminal_text.h), and numbers read from text
// (core/numbers.h): the helpers every command's output and every flag go through.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "ortkit/core/numbers.h"
#include "ortkit/core/terminal_text.h"
#include "ortkit/tensor/file_names.h"

namespace ortkit {
namespace {

bool HasRawControl(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return true;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F) return true;
    if (s.compare(i, 3, "\u202e") == 0 || s.compare(i, 3, "\u2066") == 0) return true;
  }
  return false;
}

TEST(TerminalText, EveryControlAndOverrideIsWrittenOut) {
  const std::string hostile = "a\x1b[2Jb\x1b]8;;http://x/\x07link\rc\x07\u009b31m\u202e\u2067d\x7f";
  const std::string safe = EscapeForTerminal(hostile);
  EXPECT_FALSE(HasRawControl(safe)) << safe;
  EXPECT_EQ(safe, "a\\x1b[2Jb\\x1b]8;;http://x/\\x07link\\rc\\x07\\u009b31m\\u202e\\u2067d\\u007f");
}

TEST(TerminalText, NewlinesAreEscapedInNamesAndKeptInRenderedText) {
  EXPECT_EQ(EscapeForTerminal("a\nb\tc"), "a\\nb\\tc");
  EXPECT_EQ(SafeForTerminal("a\nb\tc\x1b[2J", false), "a\nb\tc\\x1b[2J");
}

TEST(TerminalText, OwnColourIsKeptOnlyWhenAsked) {
  const std::string coloured = "\x1b[31merror\x1b[0m \x1b[2J";
  EXPECT_EQ(SafeForTerminal(coloured, true), "\x1b[31merror\x1b[0m \\x1b[2J");
  EXPECT_EQ(SafeForTerminal(coloured, false), "\\x1b[31merror\\x1b[0m \\x1b[2J");
}

TEST(TerminalText, PlainTextAndUtf8PassUnchanged) {
  const std::string text = "encoder/layer.3 — Größe 日本 ✓";
  EXPECT_EQ(EscapeForTerminal(text), text);
  EXPECT_EQ(EscapeForTerminal("\xc2"), "\xc2");  // a cut sequence is not a control
}

TEST(Numbers, WholeNumbersAreDecimalAndInRange) {
  EXPECT_EQ(*ParseWholeNumber("128", "--n", {1, 1000}), 128);
  EXPECT_EQ(*ParseWholeNumber("+7", "--n", {1, 1000}), 7);
  for (const char* bad : {"", "010x", "0x10", "1e3", "1.5", " 5", "5 ", "-", "+", "++1", "99999999999999999999"}) {
    auto parsed = ParseWholeNumber(bad, "--n", {0, std::numeric_limits<std::int64_t>::max()});
    EXPECT_FALSE(parsed.ok()) << bad;
  }
  auto high = ParseWholeNumber("1001", "--n", {1, 1000});
  ASSERT_FALSE(high.ok());
  EXPECT_EQ(high.error().message, "--n '1001': expected a whole number from 1 to 1000");
}

TEST(Numbers, RealNumbersAreFiniteAndInRange) {
  EXPECT_DOUBLE_EQ(*ParseRealNumber("1e-3", "--x", {0, 1}), 1e-3);
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "infinity", "1e309", "0x1p3", "1,5", ""}) {
    EXPECT_FALSE(ParseRealNumber(bad, "--x", {-1e300, 1e300}).ok()) << bad;
  }
  EXPECT_FALSE(ParseRealNumber("2", "--x", {0, 1}).ok());
}

TEST(Numbers, DurationsHaveUnitsAndRanges) {
  EXPECT_DOUBLE_EQ(*ParseDuration("500ms", "--d", {1e-3, 60}), 0.5);
  EXPECT_DOUBLE_EQ(*ParseDuration("2m", "--d", {1e-3, 600}), 120);
  EXPECT_DOUBLE_EQ(*ParseDuration("250us", "--d", {1e-6, 1}), 250e-6);
  EXPECT_DOUBLE_EQ(*ParseDuration("20", "--d", {1e-6, 1}, 1e-3), 0.02);
  for (const char* bad : {"1e308", "0", "-1s", "nan", "infs", "soon", "5 s", "1h5m"}) {
    EXPECT_FALSE(ParseDuration(bad, "--d", {1e-3, 86400}).ok()) << bad;
  }
}

TEST(Numbers, ListsAreBoundedInLengthAndEachItem) {
  EXPECT_EQ(*ParseWholeNumberList("1,8,32", "--c", {1, 64}), (std::vector<std::int64_t>{1, 8, 32}));
  EXPECT_FALSE(ParseWholeNumberList("1,,2", "--c", {1, 64}).ok());
  EXPECT_FALSE(ParseWholeNumberList("1,2,3", "--c", {1, 64}, 2).ok());
  EXPECT_FALSE(ParseRealNumberList("10,nan", "--r", {1e-3, 1e5}).ok());
}

TEST(Numbers, RangeChecksRefuseNaN) {
  EXPECT_TRUE(CheckRange("x", 5.0, {0, 10}).ok());
  EXPECT_FALSE(CheckRange("x", std::nan(""), {0, 10}).ok());
  EXPECT_FALSE(CheckRange("x", std::numeric_limits<double>::infinity(), {0, 1e308}).ok());
  auto refused = CheckRange("--warmup", std::int64_t{-1}, {0, 100, "runs"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "--warmup: expected 0 to 100 runs, got -1");
}

TEST(TensorFileNames, NamesThatMakeOneFileNameGetOneEach) {
  const std::vector<std::string> names = {
      "a/b", "a_b", "a:b", "a_b_2", "..", "", std::string(300, 'n'), std::string(300, 'n') + "x"};
  const auto files = TensorFileNames(names, ".npy");
  ASSERT_EQ(files.size(), names.size());
  std::set<std::string> distinct(files.begin(), files.end());
  EXPECT_EQ(distinct.size(), names.size());
  for (const auto& file : files) {
    EXPECT_LT(file.size(), 200U) << file;
    EXPECT_NE(file.front(), '.') << file;
    EXPECT_EQ(file.find('/'), std::string::npos) << file;
    EXPECT_TRUE(file.ends_with(".npy")) << file;
  }
  EXPECT_EQ(files[0], "a_b.npy");
  EXPECT_EQ(files[1], "a_b_2.npy");
}

}  // namespace
}  // namespace ortkit
