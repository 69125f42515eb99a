// libFuzzer target: load_recording on arbitrary bytes written to a store file (bench/fuzz/run.sh).
// Seeds are small stores (page size 512) from bench/fuzz/make_seeds.sh. Every failure must be
// a StoreError; a loaded recording must hold as many value rows as timestamps and as many
// columns as channels.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "reveal/store.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path =
      (std::filesystem::temp_directory_path() / ("reveal-store-fuzz-" + std::to_string(::getpid()) + ".db")).string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) __builtin_trap();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const reveal::Recording r = reveal::load_recording(path);
    if (r.values.rows() != r.t_unix_ns.size() || r.values.cols() != r.channels.size()) __builtin_trap();
    for (const auto& s : r.tenants.scans)
      for (const std::uint32_t id : s.ids)
        if (id >= r.tenants.paths.size()) __builtin_trap();
  } catch (const reveal::StoreError&) {
  }
  return 0;
}
