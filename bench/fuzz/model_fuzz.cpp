// libFuzzer target: BaselineModel::decode (bench/fuzz/run.sh). The first byte picks the input's
// shape: odd, the rest is a whole model file (header and zstd frame); even, the rest is a
// payload (sections), put in a file here, so that mutations reach the section and WMOD parsers
// past the frame's checksum. Every failure must be a ModelError; a model that decodes must score
// a short run without crashing.
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "reveal/baseline_model.h"

namespace {
reveal::Recording run() {
  reveal::Recording r;
  r.meta.hostname = "fuzz";
  r.meta.interval_s = 1.0;
  r.channels = {{"t:cpu", "%", reveal::Kind::gauge, reveal::Subsystem::cpu},
                {"t:mem", "%", reveal::Kind::gauge, reveal::Subsystem::memory}};
  for (int i = 0; i < 40; ++i) {
    const double row[] = {50.0 + (i * 7 % 5), 40.0 + (i * 3 % 4)};
    r.values.append_row(row);
    r.t_unix_ns.push_back(std::int64_t(1'700'000'000'000'000'000) + std::int64_t(i) * 1'000'000'000);
  }
  r.meta.start_unix_ns = r.t_unix_ns.front();
  r.meta.end_unix_ns = r.t_unix_ns.back();
  return r;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string file;
  if (data[0] & 1) {
    file = rest;
  } else {
    file = std::string(reveal::kModelMagic);
    for (int i = 0; i < 4; ++i) file += char((reveal::kModelFormatVersion >> (8 * i)) & 0xff);
    std::string frame(ZSTD_compressBound(rest.size()), '\0');
    frame.resize(ZSTD_compress(frame.data(), frame.size(), rest.data(), rest.size(), 1));
    file += frame;
  }
  try {
    const reveal::BaselineModel m = reveal::BaselineModel::decode(file, "fuzz.model");
    static const reveal::Recording r = run();
    (void)reveal::detect(r, m, {});
  } catch (const reveal::DetectError&) {  // ModelError is one; scoring may refuse the run
  }
  return 0;
}
