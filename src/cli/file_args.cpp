// File-name checks of the command line: see file_args.h.
#include "file_args.h"

#include <filesystem>

#include "commands.h"
#include "reveal/store.h"

namespace reveal::cli {
namespace fs = std::filesystem;

void check_not_flag(const std::string& flag, const std::string& value) {
  std::error_code ec;
  if (value.size() > 1 && value[0] == '-' && !fs::exists(value, ec))
    throw UsageError(flag + ": wants a file name, not the flag " + value);
}

void check_input_path(const std::string& what, const std::string& path) {
  if (path.empty()) throw UsageError(what + ": empty file name");
  check_not_flag(what, path);
}

void check_distinct(const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < inputs.size(); ++i)
    for (std::size_t j = i + 1; j < inputs.size(); ++j) {
      std::error_code ec;
      if (inputs[i] == inputs[j]) throw UsageError(inputs[i] + " is given twice");
      if (fs::equivalent(inputs[i], inputs[j], ec) && !ec)
        throw UsageError(inputs[i] + " and " + inputs[j] + " are the same file");
    }
}

void check_not_input(const std::string& out, const std::vector<std::string>& inputs, const std::string& flag) {
  std::error_code oec;
  const fs::path o = fs::weakly_canonical(fs::absolute(out, oec), oec);  // absolute: libstdc++ leaves "x" relative
  for (const auto& in : inputs) {
    std::error_code ec, iec;
    if (fs::equivalent(out, in, ec) && !ec)
      throw UsageError(flag + " " + out + ": is also an input (" + in + "); write the output to another file");
    const fs::path i = fs::weakly_canonical(fs::absolute(in, iec), iec);
    if (oec || iec || o.empty()) continue;
    for (const auto& side : store_side_files())
      if (o == fs::path(i.string() + side.suffix))
        throw UsageError(flag + " " + out + ": is a side file of the input store " + in +
                         "; write the output to another file");
  }
}

}  // namespace reveal::cli
