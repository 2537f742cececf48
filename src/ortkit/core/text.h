#pragma once
// Case-insensitive matching of names: what a tensor, a dimension or a file is called often says what it holds.

#include <initializer_list>
#include <string>
#include <string_view>

namespace ortkit {

/// ASCII lower case.
std::string Lower(std::string_view text);

/// Whether `text` contains any of `parts` (given in lower case), ignoring case: NameHas("attention_Mask", {"mask"}).
bool NameHas(std::string_view text, std::initializer_list<std::string_view> parts);

}  // namespace ortkit
