// Writes the seeds of the store and model fuzz targets (bench/fuzz/run.sh) into
// bench/fuzz/seeds/{store,model}/: a small v2 store (3 channels, 40 samples in chunks of 16,
// events, configuration, tenant scans; page size 512 so that it is a few kB) and a trained
// model, as a whole file (first byte 1) and as its payload (first byte 0).
// Build: c++ -std=c++20 -Iinclude -Isrc bench/fuzz/make_seeds.cpp build/libreveal.a -lsqlite3 -lzstd -lfmt -lpfm
// Run from the repository root: ./make_seeds
#include <sqlite3.h>
#include <zstd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "reveal/baseline_model.h"
#include "reveal/store.h"

namespace fs = std::filesystem;
using namespace reveal;

int main() {
  const fs::path dir = "bench/fuzz/seeds";
  fs::create_directories(dir / "store");
  fs::create_directories(dir / "model");
  const fs::path store = dir / "store" / "v2.store";
  {
    RunMetadata meta;
    meta.hostname = "seed";
    meta.start_unix_ns = 1'700'000'000'000'000'000;
    meta.interval_s = 1;
    std::vector<ChannelInfo> chans = {{"proc.stat:user", "ticks", Kind::counter, Subsystem::cpu, 64, "user time"},
                                      {"t:mem", "%", Kind::gauge, Subsystem::memory, 0, ""},
                                      {"t:disk", "%", Kind::gauge, Subsystem::storage, 0, ""}};
    StoreWriter w(store, meta, chans, 16);
    w.append_config(meta.start_unix_ns, {{"k", "v"}});
    for (int i = 0; i < 40; ++i) {
      const double row[] = {1000.0 + 7 * i, 40.0 + (i % 3), i % 5 ? 1.0 : std::nan("")};
      const std::int64_t t = meta.start_unix_ns + std::int64_t(i) * 1'000'000'000;
      w.append(t, row);
      if (i % 10 == 0) {
        TenantScan s;
        s.t_unix_ns = t;
        s.ids = {0, 1};
        s.counters = {TenantCounters{1e6 + i, 10, 20, 30}, TenantCounters{2e6, 0, 0, 0}};
        w.append_tenant_scan(s, {"a.slice", "b.slice/c.scope"});
      }
    }
    w.append_event({meta.start_unix_ns + 5'000'000'000, "seed", "mark", 1.0, "detail"});
    w.finish(meta.start_unix_ns + 40'000'000'000, 0);
  }
  sqlite3* db = nullptr;
  sqlite3_open(store.c_str(), &db);
  sqlite3_exec(db, "PRAGMA page_size=512; VACUUM;", nullptr, nullptr, nullptr);
  sqlite3_close(db);

  Recording r;
  r.meta.hostname = "seed";
  r.meta.interval_s = 1;
  r.channels = {{"t:cpu", "%", Kind::gauge, Subsystem::cpu}, {"t:mem", "%", Kind::gauge, Subsystem::memory}};
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0, 1);
  for (int i = 0; i < 200; ++i) {
    const double row[] = {50 + 3 * noise(rng), 40 + 2 * noise(rng)};
    r.values.append_row(row);
    r.t_unix_ns.push_back(1'700'000'000'000'000'000 + std::int64_t(i) * 1'000'000'000);
  }
  r.meta.start_unix_ns = r.t_unix_ns.front();
  r.meta.end_unix_ns = r.t_unix_ns.back();
  const std::string file = BaselineModel::train({r}, {}).encode();
  const std::string_view frame = std::string_view(file).substr(12);
  std::string payload(ZSTD_getFrameContentSize(frame.data(), frame.size()), '\0');
  ZSTD_decompress(payload.data(), payload.size(), frame.data(), frame.size());
  std::ofstream(dir / "model" / "file.bin", std::ios::binary) << '\1' << file;
  std::ofstream(dir / "model" / "payload.bin", std::ios::binary) << '\0' << payload;
  return 0;
}
