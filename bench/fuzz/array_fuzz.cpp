// libFuzzer target: a manifest and an array file, separated by the first NUL byte, through
// find_array_layout and import_array (bench/fuzz/run.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = all.find('\0');
  if (nul == std::string_view::npos) return 0;
  try {
    const reveal::ArrayLayout layout = reveal::find_array_layout({"MANIFEST.tsv", all.substr(0, nul)}, "d/x.pkl");
    check_recording(reveal::import_array({"x.pkl", all.substr(nul + 1)}, layout));
  } catch (const reveal::ImportError&) {
  }
  return 0;
}
