// Raw numpy arrays described by a manifest (SMD pickles) -> Recording (reveal/ingest.h, "smd").
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include "store/ingest/import_common.h"

namespace reveal {
namespace {

using importer::fail_at;
using importer::quote;

// The SMD columns as published by the dataset's first author (OmniAnomaly issue #22), numbered
// from 1 there; the subsystem of each by index: 0-3 cpu, 4-7 memory, 8-15 storage, 16-17 (swap
// in/out) memory, 18-37 network.
constexpr std::array<std::string_view, 38> kSmdColumns{
    "cpu_r",       "load_1",     "load_5",       "load_15",      "mem_shmem",      "mem_u",
    "mem_u_e",     "total_mem",  "disk_q",       "disk_r",       "disk_rb",        "disk_svc",
    "disk_u",      "disk_w",     "disk_wa",      "disk_wb",      "si",             "so",
    "eth1_fi",     "eth1_fo",    "eth1_pi",      "eth1_po",      "tcp_tw",         "tcp_use",
    "active_opens", "curr_estab", "in_errs",     "in_segs",      "listen_overflows", "out_rsts",
    "out_segs",    "passive_opens", "retransegs", "tcp_timeouts", "udp_in_dg",      "udp_out_dg",
    "udp_rcv_buf_errs", "udp_snd_buf_errs"};

Subsystem smd_subsystem(std::size_t c) {
  if (c < 4) return Subsystem::cpu;
  if (c < 8) return Subsystem::memory;
  if (c < 16) return Subsystem::storage;
  if (c < 18) return Subsystem::memory;
  return Subsystem::network;
}

std::uint64_t read_le(std::string_view data, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t(static_cast<unsigned char>(data[at + i])) << (8 * i);
  return v;
}

[[noreturn]] void fail_byte(const std::string& file, std::uint64_t offset, const std::string& message) {
  throw ImportError(fmt::format("{}: byte {}: {}", file, offset, message));
}

// True when the pickle opcode just before `offset` introduces a bytes object of `nbytes`
// (BINBYTES 'B' + u32, SHORT_BINBYTES 'C' + u8, BINBYTES8 0x8e + u64; all little-endian).
bool pickle_bytes_header(std::string_view data, std::uint64_t offset, std::uint64_t nbytes) {
  if (offset >= 5 && data[offset - 5] == 'B' && read_le(data, offset - 4, 4) == nbytes) return true;
  if (offset >= 2 && data[offset - 2] == 'C' && read_le(data, offset - 1, 1) == nbytes) return true;
  if (offset >= 9 && static_cast<unsigned char>(data[offset - 9]) == 0x8e && read_le(data, offset - 8, 8) == nbytes)
    return true;
  return false;
}

std::string hostname_of(const std::string& path) {
  std::string stem = importer::file_stem(path);
  for (std::string_view suffix : {"_train", "_test"})
    if (stem.size() > suffix.size() && stem.ends_with(suffix)) stem.resize(stem.size() - suffix.size());
  return stem;
}

}  // namespace

ArrayLayout find_array_layout(const ImportInput& manifest, std::string_view input_path) {
  for (const importer::Line& line : importer::split_lines(manifest.data)) {
    if (line.text.empty() || line.text.starts_with('#') || line.text.starts_with("file\t")) continue;
    std::vector<std::pair<std::string_view, std::size_t>> f;  // field, column
    std::size_t start = 0;
    while (true) {
      const std::size_t tab = line.text.find('\t', start);
      f.emplace_back(line.text.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start),
                     start + 1);
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    const std::string_view file = f[0].first;
    const bool match = !file.empty() && (input_path == file || (input_path.ends_with(file) &&
                                                                input_path[input_path.size() - file.size() - 1] == '/'));
    if (!match) continue;
    const auto bad = [&](std::size_t i, const std::string& what) {
      fail_at(manifest.name, line.number, i < f.size() ? f[i].second : line.text.size() + 1, what);
    };
    if (f.size() != 8) bad(std::min<std::size_t>(f.size(), 8), fmt::format("{} tab-separated fields, want 8", f.size()));
    ArrayLayout a;
    a.file = std::string(file);
    const std::string_view shape = f[1].first;
    const std::size_t x = shape.find('x');
    const auto rows = importer::parse_int(shape.substr(0, x));
    const auto cols = x == std::string_view::npos ? std::optional<std::int64_t>(1) : importer::parse_int(shape.substr(x + 1));
    if (!rows || !cols || *rows < 1 || *cols < 1 || *rows > (1LL << 40) || *cols > 100'000)
      bad(1, "shape " + quote(shape) + " is not ROWSxCOLS");
    a.rows = std::size_t(*rows);
    a.cols = std::size_t(*cols);
    if (f[2].first == "f4") a.item_size = 4;
    else if (f[2].first == "f8") a.item_size = 8;
    else bad(2, "dtype " + quote(f[2].first) + " is not f4 or f8");
    if (f[3].first == "little-endian") a.little_endian = true;
    else if (f[3].first == "big-endian") a.little_endian = false;
    else bad(3, "endianness " + quote(f[3].first) + " is not little-endian or big-endian");
    if (f[4].first == "C") a.row_major = true;
    else if (f[4].first == "F") a.row_major = false;
    else bad(4, "order " + quote(f[4].first) + " is not C or F");
    const auto offset = importer::parse_int(f[5].first), nbytes = importer::parse_int(f[6].first),
               size = importer::parse_int(f[7].first);
    if (!offset || *offset < 0) bad(5, "data_offset " + quote(f[5].first) + " is not a byte offset");
    if (!nbytes || *nbytes < 0) bad(6, "data_nbytes " + quote(f[6].first) + " is not a byte count");
    if (!size || *size < 0) bad(7, "file_size " + quote(f[7].first) + " is not a byte count");
    a.data_offset = std::uint64_t(*offset);
    a.data_nbytes = std::uint64_t(*nbytes);
    a.file_size = std::uint64_t(*size);
    return a;
  }
  throw ImportError(std::string(input_path) + ": not listed in " + manifest.name);
}

Recording import_array(const ImportInput& in, const ArrayLayout& a, const ImportOptions& opt) {
  const std::uint64_t size = in.data.size();
  if (size != a.file_size)
    fail_byte(in.name, size, fmt::format("the file ends here, the manifest says it is {} bytes", a.file_size));
  std::uint64_t want = 0;
  if (__builtin_mul_overflow(std::uint64_t(a.rows), std::uint64_t(a.cols), &want) ||
      __builtin_mul_overflow(want, std::uint64_t(a.item_size), &want) || want != a.data_nbytes)
    fail_byte(in.name, a.data_offset,
              fmt::format("the manifest's {} data bytes are not {}x{} values of {} bytes", a.data_nbytes, a.rows,
                          a.cols, a.item_size));
  if (a.data_offset > size || a.data_nbytes > size - a.data_offset)
    fail_byte(in.name, a.data_offset, fmt::format("{} data bytes from here run past the end ({} bytes)", a.data_nbytes, size));
  if (!pickle_bytes_header(in.data, a.data_offset, a.data_nbytes))
    fail_byte(in.name, a.data_offset,
              fmt::format("no pickle bytes opcode of length {} introduces the array here", a.data_nbytes));

  const std::int64_t t0 = importer::start_ns(opt), dt = importer::interval_ns(opt);
  std::int64_t span = 0;
  if (__builtin_mul_overflow(std::int64_t(a.rows), dt, &span) || __builtin_add_overflow(t0, span, &span))
    throw ImportError(in.name + ": " + std::to_string(a.rows) + " samples from the start time overflow the clock");

  Recording rec;
  const bool smd = a.cols == kSmdColumns.size();
  for (std::size_t c = 0; c < a.cols; ++c) {
    ChannelInfo ch;
    ch.name = fmt::format("smd:col{:02}", c);
    ch.unit = "";
    ch.kind = Kind::gauge;
    ch.subsystem = smd ? smd_subsystem(c) : Subsystem::system;
    ch.help = smd ? fmt::format("SMD column {} ({}; min-max normalised)", c + 1, kSmdColumns[c])
                  : fmt::format("array column {}", c + 1);
    rec.channels.push_back(std::move(ch));
  }
  const bool swap = a.little_endian != (std::endian::native == std::endian::little);
  rec.values = Matrix(a.rows, a.cols);
  rec.t_unix_ns.resize(a.rows);
  const char* base = in.data.data() + a.data_offset;
  for (std::size_t r = 0; r < a.rows; ++r) {
    rec.t_unix_ns[r] = t0 + std::int64_t(r) * dt;
    for (std::size_t c = 0; c < a.cols; ++c) {
      const std::size_t i = a.row_major ? r * a.cols + c : c * a.rows + r;
      const char* p = base + i * a.item_size;
      double v;
      if (a.item_size == 4) {
        std::uint32_t u;
        std::memcpy(&u, p, 4);
        if (swap) u = __builtin_bswap32(u);
        v = std::bit_cast<float>(u);
      } else {
        std::uint64_t u;
        std::memcpy(&u, p, 8);
        if (swap) u = __builtin_bswap64(u);
        v = std::bit_cast<double>(u);
      }
      rec.values(r, c) = std::isfinite(v) ? v : std::nan("");
    }
  }
  importer::finish_metadata(rec, "smd", hostname_of(in.name), {in.name}, opt.interval_s);
  rec.meta.interval_s = double(dt) * 1e-9;
  return rec;
}

}  // namespace reveal
