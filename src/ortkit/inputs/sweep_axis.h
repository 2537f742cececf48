#pragma once
// One symbolic dimension and the sizes to try it at: what validate's sweep (--sweep batch=1,4,16) and
// bench's shapes (--dim seq_len=16,64) both step through.

#include <cstdint>
#include <string>
#include <vector>

namespace ortkit {

struct SweepAxis {
  std::string dim;                   ///< a symbolic dimension name of the inputs
  std::vector<std::int64_t> values;  ///< sizes to try, in order
};

}  // namespace ortkit
