// libFuzzer target: import_prometheus on arbitrary bytes, split into scrapes at "\n---\n"
// (bench/fuzz/run.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::vector<reveal::ImportInput> scrapes;
  while (true) {
    const std::size_t cut = rest.find("\n---\n");
    scrapes.push_back({"s" + std::to_string(scrapes.size()), rest.substr(0, cut)});
    if (cut == std::string_view::npos) break;
    rest.remove_prefix(cut + 5);
  }
  try {
    check_recording(reveal::import_prometheus(scrapes));
  } catch (const reveal::ImportError&) {
  }
  return 0;
}
