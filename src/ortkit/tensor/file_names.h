#pragma once
// File names for tensors, made from the names a model gives them (arbitrary bytes: "/encoder/out",
// "a/b" beside "a_b", a thousand characters, control characters, "").

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ortkit {

/// A file stem for a value name: characters other than letters, digits, '.', '-' and '_' become
/// '_' ("/encoder/MatMul_output_0" -> "_encoder_MatMul_output_0"). References are matched to values
/// by it, so it is the same for every writer.
std::string ReferenceFileStem(std::string_view value_name);

/// One file name per name, in order: ReferenceFileStem(name) + extension, cut to a length every file
/// system takes (a hash of the whole name kept), never empty or hidden, and distinct within the list:
/// "a/b" and "a_b" give "a_b.npy" and "a_b_2.npy", so no file overwrites another.
std::vector<std::string> TensorFileNames(std::span<const std::string> names, std::string_view extension);

}  // namespace ortkit
