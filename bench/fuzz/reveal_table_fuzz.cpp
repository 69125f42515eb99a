// libFuzzer target: import_reveal_table on arbitrary bytes (bench/fuzz/run.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    check_recording(reveal::import_reveal_table({"fuzz.txt", std::string_view(reinterpret_cast<const char*>(data), size)}));
  } catch (const reveal::ImportError&) {
  }
  return 0;
}
