#pragma once
// Numbers on the command line are read by the parser that reads config files and requests
// (core/numbers.h): each numeric flag states its range, and every other one is at least a number
// that fits, never a saturated, wrapped, octal or NaN value.

#include <cstdint>
#include <string_view>

#include <CLI/CLI.hpp>

namespace ortkit::cli {

/// A whole number from `least` to `most` ("--iterations: '1e30': expected a whole number from 1 to 10000000").
CLI::Validator WholeNumberIn(std::int64_t least, std::int64_t most, std::string_view unit = "");

/// A finite number from `least` to `most`.
CLI::Validator RealNumberIn(double least, double most, std::string_view unit = "");

/// Every option of `app` and its commands that CLI11 reads as a number (type INT, UINT or FLOAT)
/// gets the parser's check too: decimal, the whole text, within its type's range, finite.
void CheckEveryNumber(CLI::App& app);

}  // namespace ortkit::cli
