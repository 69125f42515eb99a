#include <cmath>
#include <cstring>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "reveal/ingest.h"

namespace reveal {
namespace {

// A stand-in for a numpy pickle: 10 bytes of "header" ending in BINBYTES 'B' + u32 length,
// the float32 block, then "q.b." as the real files end.
std::string fake_pickle(const std::vector<float>& values) {
  std::string s = "\x80\x03xxxxx";
  const std::uint32_t n = std::uint32_t(values.size() * 4);
  s += 'B';
  for (int i = 0; i < 4; ++i) s += char((n >> (8 * i)) & 0xff);
  s.append(reinterpret_cast<const char*>(values.data()), n);
  return s + "q.b.";
}

std::string manifest_line(const std::string& file, const std::string& shape, std::size_t nbytes,
                          std::size_t size, const std::string& order = "C", const std::string& dtype = "f4") {
  return file + "\t" + shape + "\t" + dtype + "\tlittle-endian\t" + order + "\t12\t" + std::to_string(nbytes) + "\t" +
         std::to_string(size) + "\n";
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ImportError& e) {
    return e.what();
  }
  return "";
}

const std::vector<float> kValues{0.f, 0.5f, 1.f, 0.25f, 0.75f, std::nanf("")};  // 3 rows x 2

TEST(ArrayImport, ReadsRowMajorFloat32WithSyntheticTimes) {
  const std::string data = fake_pickle(kValues);
  const std::string manifest = "# comment\nfile\tshape\tdtype\tendianness\torder\tdata_offset\tdata_nbytes\tfile_size\n" +
                               manifest_line("processed/m-1_train.pkl", "3x2", 24, data.size());
  const ArrayLayout a = find_array_layout({"MANIFEST.tsv", manifest}, "/data/SMD/processed/m-1_train.pkl");
  EXPECT_EQ(a.rows, 3u);
  EXPECT_EQ(a.cols, 2u);
  ImportOptions opt;
  opt.start_unix_ns = 1'000'000'000;
  opt.interval_s = 60;
  const Recording r = import_array({"processed/m-1_train.pkl", data}, a, opt);
  ASSERT_EQ(r.channels.size(), 2u);
  EXPECT_EQ(r.channels[1].name, "smd:col01");
  EXPECT_EQ(r.channels[1].kind, Kind::gauge);
  EXPECT_EQ(r.channels[1].unit, "");
  ASSERT_EQ(r.t_unix_ns.size(), 3u);
  EXPECT_EQ(r.t_unix_ns[2], 1'000'000'000 + 2 * 60'000'000'000LL);
  EXPECT_EQ(r.values(0, 1), 0.5);
  EXPECT_EQ(r.values(1, 0), 1.0);
  EXPECT_TRUE(std::isnan(r.values(2, 1)));
  EXPECT_EQ(r.meta.hostname, "m-1");
  EXPECT_DOUBLE_EQ(r.meta.interval_s, 60);
}

TEST(ArrayImport, ColumnMajorAndOneDimensional) {
  const std::string data = fake_pickle(kValues);
  ArrayLayout a = find_array_layout({"M", manifest_line("x.pkl", "3x2", 24, data.size(), "F")}, "x.pkl");
  Recording r = import_array({"x.pkl", data}, a);
  EXPECT_EQ(r.values(0, 1), 0.25);  // column 1 starts at the 4th value
  EXPECT_EQ(r.values(1, 0), 0.5);
  EXPECT_EQ(r.t_unix_ns[0], kDefaultImportStartNs);
  a = find_array_layout({"M", manifest_line("y.pkl", "6", 24, data.size())}, "y.pkl");
  r = import_array({"y.pkl", data}, a);
  EXPECT_EQ(r.channels.size(), 1u);
  EXPECT_EQ(r.t_unix_ns.size(), 6u);
}

TEST(ArrayImport, SmdLayoutNamesPublishedMetrics) {
  std::vector<float> v(38 * 2, 0.5f);
  const std::string data = fake_pickle(v);
  const ArrayLayout a = find_array_layout({"M", manifest_line("m_test.pkl", "2x38", 304, data.size())}, "m_test.pkl");
  const Recording r = import_array({"m_test.pkl", data}, a);
  ASSERT_EQ(r.channels.size(), 38u);
  EXPECT_EQ(r.channels[0].subsystem, Subsystem::cpu);
  EXPECT_NE(r.channels[0].help.find("cpu_r"), std::string::npos);
  EXPECT_EQ(r.channels[9].subsystem, Subsystem::storage);
  EXPECT_EQ(r.channels[37].subsystem, Subsystem::network);
  EXPECT_EQ(r.channels[37].name, "smd:col37");
}

TEST(ArrayImport, BadManifestOrFileNamesLineOrByte) {
  const std::string data = fake_pickle(kValues);
  const auto layout = [&](const std::string& line) {
    return error_of([&] { find_array_layout({"MANIFEST.tsv", "# c\n" + line}, "/d/x.pkl"); });
  };
  EXPECT_EQ(layout("x.pkl\t3y2\tf4\tlittle-endian\tC\t12\t24\t40\n"), "MANIFEST.tsv:2:7: shape '3y2' is not ROWSxCOLS");
  EXPECT_EQ(layout("x.pkl\t3x2\ti4\tlittle-endian\tC\t12\t24\t40\n"), "MANIFEST.tsv:2:11: dtype 'i4' is not f4 or f8");
  EXPECT_EQ(layout("x.pkl\t3x2\tf4\tlittle-endian\tC\t12\t24\n"), "MANIFEST.tsv:2:35: 7 tab-separated fields, want 8");
  EXPECT_EQ(layout("x.pkl\t3x2\tf4\tlittle-endian\tC\t-1\t24\t40\n"), "MANIFEST.tsv:2:30: data_offset '-1' is not a byte offset");
  EXPECT_EQ(layout("other.pkl\t3x2\tf4\tlittle-endian\tC\t12\t24\t40\n"), "/d/x.pkl: not listed in MANIFEST.tsv");
  EXPECT_EQ(layout("d/x.pkl\t3x2\tf4\tlittle-endian\tC\t12\t24\t40\n"), "");  // suffix at a '/' boundary
  EXPECT_EQ(layout("/x.pkl\t3x2\tf4\tlittle-endian\tC\t12\t24\t40\n").empty(), false);

  const auto import_bytes = [&](const std::string& bytes, const std::string& line) {
    return error_of([&] { import_array({"x.pkl", bytes}, find_array_layout({"M", line}, "x.pkl")); });
  };
  // Truncated file: shorter than the manifest says.
  EXPECT_EQ(import_bytes(data.substr(0, 30), manifest_line("x.pkl", "3x2", 24, data.size())),
            "x.pkl: byte 30: the file ends here, the manifest says it is 40 bytes");
  // The block runs past the end of the file.
  EXPECT_EQ(import_bytes(data.substr(0, 30), manifest_line("x.pkl", "3x2", 24, 30)),
            "x.pkl: byte 12: 24 data bytes from here run past the end (30 bytes)");
  // Shape and byte count disagree.
  EXPECT_EQ(import_bytes(data, manifest_line("x.pkl", "4x2", 24, data.size())),
            "x.pkl: byte 12: the manifest's 24 data bytes are not 4x2 values of 4 bytes");
  // The offset does not point after the pickle's bytes opcode.
  std::string shifted = "\x80" + data.substr(0, data.size() - 1);
  EXPECT_EQ(import_bytes(shifted, manifest_line("x.pkl", "3x2", 24, shifted.size())),
            "x.pkl: byte 12: no pickle bytes opcode of length 24 introduces the array here");
  EXPECT_EQ(import_bytes(data, manifest_line("x.pkl", "3x3", 36, data.size())).substr(0, 14), "x.pkl: byte 12");
}

}  // namespace
}  // namespace reveal
