// Untrusted model files (issue #18): a zstd bomb, a frame without a content size that
// decompresses past the bound, huge or many unknown sections, and an oversized file are one
// ModelError line naming the file, refused before the memory is spent; real models stay far
// inside the bounds (include/reveal/baseline_model.h).
#include <unistd.h>
#include <zstd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "reveal/baseline_model.h"

namespace reveal {
namespace {

constexpr std::int64_t kS = 1'000'000'000;

// A 1 Hz host of four noisy gauges.
Recording host(std::uint64_t seed, std::size_t n) {
  Recording r;
  r.meta.hostname = "h";
  r.meta.interval_s = 1.0;
  r.channels = {{"t:cpu", "%", Kind::gauge, Subsystem::cpu},
                {"t:mem", "%", Kind::gauge, Subsystem::memory},
                {"t:disk", "%", Kind::gauge, Subsystem::storage},
                {"t:net", "B/s", Kind::gauge, Subsystem::network}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double row[] = {50 + 3 * noise(rng), 40 + 2 * noise(rng), 10 + noise(rng), 1e6 + 1e4 * noise(rng)};
    r.values.append_row(row);
    r.t_unix_ns.push_back(std::int64_t(1'700'000'000) * kS + std::int64_t(i) * kS);
  }
  r.meta.start_unix_ns = r.t_unix_ns.front();
  r.meta.end_unix_ns = r.t_unix_ns.back();
  return r;
}

const std::string& good_model() {
  static const std::string m = BaselineModel::train({host(3, 400)}, {}).encode();
  return m;
}

std::string header() {
  std::string out(kModelMagic);
  for (int i = 0; i < 4; ++i) out += char((kModelFormatVersion >> (8 * i)) & 0xff);
  return out;
}

std::string payload_of(const std::string& file) {
  const std::string_view frame = std::string_view(file).substr(12);
  std::string body(ZSTD_getFrameContentSize(frame.data(), frame.size()), '\0');
  EXPECT_EQ(ZSTD_decompress(body.data(), body.size(), frame.data(), frame.size()), body.size());
  return body;
}

// A model file around `bytes` of payload produced by `fill` in 1 MiB steps (streamed, so the
// test never holds the payload); with the content size declared or not.
template <typename Fill>
std::string streamed_file(std::uint64_t bytes, bool declare_size, Fill fill) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
  if (declare_size) ZSTD_CCtx_setPledgedSrcSize(cctx, bytes);
  else ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  std::string out = header(), buf(ZSTD_CStreamOutSize(), '\0');
  std::uint64_t at = 0;
  bool last = false;
  do {
    const std::size_t n = std::size_t(std::min<std::uint64_t>(bytes - at, 1 << 20));
    const std::string chunk = fill(at, n);
    at += n;
    last = at >= bytes;
    ZSTD_inBuffer in{chunk.data(), chunk.size(), 0};
    for (;;) {
      ZSTD_outBuffer o{buf.data(), buf.size(), 0};
      const std::size_t left = ZSTD_compressStream2(cctx, &o, &in, last ? ZSTD_e_end : ZSTD_e_continue);
      EXPECT_FALSE(ZSTD_isError(left));
      out.append(buf.data(), o.pos);
      if (ZSTD_isError(left) || (last ? left == 0 : in.pos == in.size)) break;
    }
  } while (!last);
  ZSTD_freeCCtx(cctx);
  return out;
}

std::string expect_model_error(const std::string& bytes, const std::string& needle) {
  try {
    (void)BaselineModel::decode(bytes, "bad.model");
    ADD_FAILURE() << "decoded a crafted model (" << needle << ")";
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("bad.model: ", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    return msg;
  }
  return "";
}

std::string section(const std::string& tag, const std::string& body) {
  std::string s = tag;
  for (int i = 0; i < 8; ++i) s += char((std::uint64_t(body.size()) >> (8 * i)) & 0xff);
  return s + body;
}

TEST(UntrustedModel, RealModelsCompressFarInsideTheRatioBound) {
  const std::string& m = good_model();
  const double ratio = double(payload_of(m).size()) / double(m.size() - 12);
  std::printf("model: %zu bytes in the file, payload %zu, ratio %.2f\n", m.size(), payload_of(m).size(), ratio);
  EXPECT_LT(ratio, 64.0 / 8);
  EXPECT_NO_THROW((void)BaselineModel::decode(m, "good.model"));
}

TEST(UntrustedModel, ZstdBombIsRefusedBeforeItIsDecompressed) {
  // 1 GiB of zeros declared in a frame of some 33 kB (the review's bomb peaked at 3 GB).
  const std::string bomb = streamed_file(std::uint64_t(1) << 30, true,
                                         [](std::uint64_t, std::size_t n) { return std::string(n, '\0'); });
  ASSERT_LT(bomb.size(), 64u << 10);
  const auto t0 = std::chrono::steady_clock::now();
  expect_model_error(bomb, "claims 1024.0 MiB, over the");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.5);
}

TEST(UntrustedModel, FrameWithoutContentSizeIsStreamedUpToTheBound) {
  // A real model in a frame that does not declare its size still loads...
  const std::string payload = payload_of(good_model());
  const std::string unsized = streamed_file(payload.size(), false, [&](std::uint64_t at, std::size_t n) {
    return payload.substr(std::size_t(at), n);
  });
  ASSERT_EQ(ZSTD_getFrameContentSize(unsized.data() + 12, unsized.size() - 12), ZSTD_CONTENTSIZE_UNKNOWN);
  EXPECT_NO_THROW((void)BaselineModel::decode(unsized, "unsized.model"));
  // ...and a bomb of that kind is stopped once it passes the bound.
  const std::string bomb = streamed_file(std::uint64_t(1) << 30, false,
                                         [](std::uint64_t, std::size_t n) { return std::string(n, '\0'); });
  expect_model_error(bomb, "decompresses past");
}

TEST(UntrustedModel, HugeOrManyUnknownSectionsAreRefused) {
  const std::string payload = payload_of(good_model());
  const auto file_of = [](const std::string& p) {
    std::string frame(ZSTD_compressBound(p.size()), '\0');
    frame.resize(ZSTD_compress(frame.data(), frame.size(), p.data(), p.size(), 1));
    return header() + frame;
  };
  // A small section of a later revision is skipped, as the format promises.
  EXPECT_NO_THROW((void)BaselineModel::decode(file_of(payload + section("XTRA", std::string(1000, 'x'))), "ok.model"));
  // 2 MiB of unknown section (random bytes: the frame is as large, so the ratio allows it).
  std::mt19937_64 rng(5);
  std::string junk(2 << 20, '\0');
  for (char& c : junk) c = char(rng());
  expect_model_error(file_of(payload + section("XTRA", junk)), "unknown sections of 2097152 bytes");
  std::string many = payload;
  for (int i = 0; i < 17; ++i) many += section("XTRA", "");
  expect_model_error(file_of(many), "17 unknown sections");
}

TEST(UntrustedModel, OversizedFileIsRefusedBeforeItIsRead) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("reveal-untrusted-model-" + std::to_string(::getpid()) + ".model")).string();
  {
    std::ofstream f(path, std::ios::binary);
    f << header();
  }
  std::filesystem::resize_file(path, std::uintmax_t(300) << 20);  // sparse: costs no disk
  try {
    (void)BaselineModel::load(path);
    ADD_FAILURE() << "loaded a 300 MiB file";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than any model file"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace reveal
