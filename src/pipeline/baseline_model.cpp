// Baseline models: training, the model file and its metadata; contract and file format in
// include/reveal/baseline_model.h. Scoring a run against a model lives in offline.cpp.
#include "reveal/baseline_model.h"
#include "reveal/store_reader.h"

#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reveal/binary_io.h"
#include "reveal/units.h"
#include "reveal/version.h"
#include "reference.h"
#include "window_model.h"
#include "workload_change.h"

namespace reveal {
namespace {

constexpr std::size_t kHeaderBytes = kModelMagic.size() + 4;
constexpr int kZstdLevel = 12;

// Bounds on what a model file may make the reader allocate (the file may be anyone's: a zstd
// frame of 33 kB can claim, and decompress to, gigabytes). Documented in reveal/baseline_model.h.
constexpr std::uint64_t kMaxPayload = kModelMaxPayload;
// The payload may be at most this many times its compressed frame, plus kRatioSlack: a model
// is mostly doubles (floors, medians, the forest's keys and depths, PCA axes, SPOT references),
// which zstd shrinks by well under 2x; the test models compress 2-4x (tests/pipeline/).
constexpr std::uint64_t kMaxRatio = 64;
constexpr std::uint64_t kRatioSlack = std::uint64_t(1) << 20;
// The window a frame without a content size may ask of the streaming decoder (32 MiB).
constexpr int kWindowLogMax = 25;
constexpr std::size_t kStreamStep = std::size_t(1) << 16;

const char* pca_name(PcaUse p) { return p == PcaUse::off ? "off" : p == PcaUse::fuse ? "fuse" : "report"; }

[[noreturn]] void fail(const std::string& name, const std::string& what) { throw ModelError(name + ": " + what); }

std::string mib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1 << 20));
  return buf;
}

// The payload of the model frame `frame` (one whole zstd frame): at most kMaxPayload bytes and
// at most kRatioSlack + kMaxRatio x the frame. A frame that declares its size (every frame
// reveal writes) is checked before anything is allocated; one that does not is decompressed in
// steps and refused as soon as it passes the bound.
std::string decompress_payload(std::string_view frame, const std::string& name) {
  const std::uint64_t cap = std::min<std::uint64_t>(kMaxPayload, kRatioSlack + kMaxRatio * frame.size());
  const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_ERROR) fail(name, "model payload is corrupt (bad zstd frame header)");
  const auto too_big = [&](const std::string& claim) {
    fail(name, "model payload " + claim + ", over the " + mib(cap) + " a model file of " + std::to_string(frame.size()) +
                   " compressed bytes may hold (a zstd bomb, or not a model reveal wrote)");
  };
  if (size != ZSTD_CONTENTSIZE_UNKNOWN) {
    if (size > cap) too_big("claims " + mib(size));
    std::string body(std::size_t(size), '\0');
    const std::size_t got = ZSTD_decompress(body.data(), body.size(), frame.data(), frame.size());
    if (ZSTD_isError(got) || got != body.size())
      fail(name, std::string("model payload is corrupt (") + (ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short") + ")");
    return body;
  }
  std::unique_ptr<ZSTD_DCtx, std::size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!dctx) throw std::bad_alloc();
  ZSTD_DCtx_setParameter(dctx.get(), ZSTD_d_windowLogMax, kWindowLogMax);
  std::string body;
  std::size_t at = 0;
  ZSTD_inBuffer in{frame.data(), frame.size(), 0};
  for (;;) {
    if (at == body.size()) {
      if (body.size() >= cap) too_big("decompresses past " + mib(cap));
      body.resize(std::size_t(std::min<std::uint64_t>(cap, std::max(kStreamStep, 2 * body.size()))));
    }
    ZSTD_outBuffer out{body.data() + at, body.size() - at, 0};
    const std::size_t r = ZSTD_decompressStream(dctx.get(), &out, &in);
    if (ZSTD_isError(r)) fail(name, std::string("model payload is corrupt (") + ZSTD_getErrorName(r) + ")");
    at += out.pos;
    if (r == 0) break;  // the frame is complete
    if (in.pos == in.size && out.pos < out.size) fail(name, "model payload is truncated or corrupt");
  }
  body.resize(at);
  return body;
}

void section(ByteWriter& out, const char (&tag)[5], std::string_view body) {
  for (int i = 0; i < 4; ++i) out.u8(std::uint8_t(tag[i]));
  out.str(body);  // u64 length, then the bytes
}

}  // namespace

TrainingInput load_training_stores(const std::vector<std::string>& stores, std::size_t window_length,
                                   Progress* progress) {
  const std::size_t slice = std::max(kTrainingSliceSamples, 4 * (window_length + 1));
  // How many values the stores hold, from their chunks' claims (an upper bound, cheap).
  std::uint64_t values = 0;
  std::size_t channels = 1;
  for (const auto& p : stores) {
    StoreReader r(p);
    channels = std::max(channels, r.store_channels());
    values += r.claimed_samples(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()) *
              r.store_channels();
  }
  TrainingInput in;
  const std::size_t budget = values <= kTrainingMaxValues
                                 ? std::numeric_limits<std::size_t>::max()
                                 : std::max(2 * slice,
                                            kTrainingMaxValues / channels / std::max<std::size_t>(stores.size(), 1));
  for (std::size_t i = 0; i < stores.size(); ++i) {
    if (progress) progress->update("load", i, stores.size());
    for (auto& r : load_recording_slices(stores[i], budget, slice)) {
      in.recordings.push_back(std::move(r));
      in.paths.push_back(stores[i]);
    }
  }
  return in;
}

BaselineModel BaselineModel::train(const std::vector<Recording>& good, const DetectOptions& opts,
                                   const std::vector<std::string>& paths) {
  if (!paths.empty() && paths.size() != good.size())
    throw std::invalid_argument("BaselineModel::train: one path per recording, or none");
  BaselineModel m{Fields{}};
  m.opts_ = opts;
  m.opts_.progress = nullptr;  // the caller's, for this call only
  m.reveal_version_ = kVersion;
  m.created_unix_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count();
  const std::size_t L = std::max<std::size_t>(opts.window.length, 1);
  std::vector<Series> refs;
  std::vector<const Recording*> used;
  for (std::size_t i = 0; i < good.size(); ++i) {
    const Recording& g = good[i];
    const std::string name = paths.empty() ? g.meta.hostname : paths[i];
    if (g.t_unix_ns.size() < L + 1) {
      m.notes_.push_back(name + ": " + std::to_string(g.t_unix_ns.size()) +
                         " samples, too short for one window of rates; not used");
      continue;
    }
    if (opts.progress) opts.progress->update("rates", i, good.size());
    refs.push_back(prepare_series(g));
    used.push_back(&g);
    TrainingStore ts;
    ts.path = paths.empty() ? "" : paths[i];
    ts.hostname = g.meta.hostname;
    ts.samples = g.t_unix_ns.size();
    ts.start_unix_ns = g.t_unix_ns.front();
    ts.end_unix_ns = g.t_unix_ns.back();
    ts.interval_s = g.meta.interval_s;
    m.training_.push_back(std::move(ts));
  }
  if (refs.empty()) throw DetectError("every baseline is too short for one window");

  // Channels: in every store, finite in at least half of the pooled samples.
  const Series& first = refs.front();
  std::vector<std::vector<int>> cols(refs.size());
  for (std::size_t c = 0; c < first.channels.size(); ++c) {
    std::vector<int> idx;
    std::size_t finite = 0, total = 0;
    for (const Series& r : refs) {
      const int j = r.find(first.channels[c].name);
      if (j < 0) break;
      idx.push_back(j);
      finite += pipeline::finite_column(r.values, std::size_t(j)).size();
      total += r.t_s.size();
    }
    if (idx.size() != refs.size() || finite == 0 || finite * 2 < total) continue;
    for (std::size_t k = 0; k < refs.size(); ++k) cols[k].push_back(idx[k]);
    ChannelInfo ch;
    ch.name = first.channels[c].name;
    ch.unit = first.channels[c].unit;
    ch.subsystem = first.channels[c].subsystem;
    m.channels_.push_back(std::move(ch));
  }
  if (m.channels_.empty()) throw DetectError("the baselines share no channel with data in at least half their samples");

  std::vector<double> floors = pipeline::channel_floors(refs[0], cols[0]);
  for (std::size_t k = 1; k < refs.size(); ++k) {
    const std::vector<double> f = pipeline::channel_floors(refs[k], cols[k]);
    for (std::size_t j = 0; j < floors.size(); ++j) floors[j] = std::min(floors[j], f[j]);
  }
  std::vector<Subsystem> subsystems;
  for (const auto& ch : m.channels_) subsystems.push_back(ch.subsystem);
  std::vector<Windows> windows;
  windows.reserve(refs.size());
  for (const Series& r : refs) windows.push_back(make_windows(r, opts.window));
  std::vector<const ChannelInfo*> chans;
  for (const auto& ch : m.channels_) chans.push_back(&ch);
  auto wm = std::make_shared<pipeline::WindowModel>(std::move(floors), std::move(subsystems), opts,
                                                    window_period_s(windows[0], *used[0]), pipeline::ambient_mask(chans));
  // Each store's start-up windows (ending within settle_s of its first sample) as in self mode
  // (pipeline::startup_reference()).
  std::vector<std::vector<char>> keep(refs.size());
  std::vector<pipeline::ReferenceWindows> rw;
  for (std::size_t k = 0; k < refs.size(); ++k) {
    const std::size_t n = windows[k].first_row.size();
    const std::size_t settle = std::size_t(std::count_if(windows[k].t_end_s.begin(), windows[k].t_end_s.end(),
                                                         [&](double t) { return t < opts.settle_s; }));
    const pipeline::StartupUse su = pipeline::startup_reference(n, settle);
    keep[k].assign(n, 1);
    std::fill_n(keep[k].begin(), su.drop, 0);
    rw.push_back({&windows[k], &cols[k], &keep[k], su.tail_from});
    m.training_[k].windows = windows[k].first_row.size();
  }
  // The slices of one long store (consecutive recordings of one path) are one training store.
  {
    std::vector<TrainingStore> merged;
    std::vector<std::size_t> parts;
    for (auto& t : m.training_) {
      if (!merged.empty() && !t.path.empty() && merged.back().path == t.path) {
        TrainingStore& b = merged.back();
        b.samples += t.samples;
        b.windows += t.windows;
        b.start_unix_ns = std::min(b.start_unix_ns, t.start_unix_ns);
        b.end_unix_ns = std::max(b.end_unix_ns, t.end_unix_ns);
        ++parts.back();
      } else {
        merged.push_back(std::move(t));
        parts.push_back(1);
      }
    }
    for (std::size_t k = 0; k < merged.size(); ++k)
      if (parts[k] > 1)
        m.notes_.push_back(fmt::format("{}: a long store: {} samples of it, in {} slices spread over its length",
                                       merged[k].path, merged[k].samples, parts[k]));
    m.training_ = std::move(merged);
  }
  if (opts.progress) opts.progress->update("fit", 0, 1);
  wm->fit(rw);
  if (opts.progress) opts.progress->update("fit", 1, 1);
  m.wm_ = std::move(wm);
  return m;
}

std::vector<std::string> BaselineModel::training_hosts() const {
  std::vector<std::string> h;
  for (const auto& t : training_) h.push_back(t.hostname);
  return h;
}
const std::vector<double>& BaselineModel::floors() const { return wm_->floors(); }
std::size_t BaselineModel::model_channels() const { return wm_->n_model_channels(); }
std::size_t BaselineModel::reference_windows() const { return wm_->reference_windows(); }
std::size_t BaselineModel::pca_components() const { return wm_->pca_components(); }

std::string BaselineModel::metadata_json() const {
  using nlohmann::json;
  json training = json::array();
  for (const auto& t : training_)
    training.push_back({{"path", t.path}, {"hostname", t.hostname}, {"samples", t.samples}, {"windows", t.windows},
                        {"start", format_utc(t.start_unix_ns)}, {"end", format_utc(t.end_unix_ns)},
                        {"start_unix_ns", t.start_unix_ns}, {"end_unix_ns", t.end_unix_ns},
                        {"interval_s", t.interval_s}});
  json channels = json::array();
  const auto& floors = wm_->floors();
  for (std::size_t j = 0; j < channels_.size(); ++j)
    channels.push_back({{"name", channels_[j].name}, {"unit", channels_[j].unit},
                        {"subsystem", std::string(to_string(channels_[j].subsystem))}, {"floor", floors[j]}});
  json j = {
      {"format", "reveal.model"},
      {"format_version", format_version_},
      {"reveal_version", reveal_version_},
      {"created", format_utc(created_unix_ns_)},
      {"created_unix_ns", created_unix_ns_},
      {"training", training},
      {"window", {{"length", opts_.window.length}, {"stride", opts_.window.stride}, {"trail", opts_.window.trail}}},
      {"detect",
       {{"z_cut", opts_.z_cut}, {"if_cut", opts_.if_cut}, {"pca_cut", opts_.pca_cut}, {"pca", pca_name(opts_.pca)},
        {"pca_variance", opts_.pca_variance}, {"prune_r", opts_.prune_r}, {"seed", opts_.seed}}},
      {"model",
       {{"channels", channels_.size()}, {"model_channels", wm_->n_model_channels()},
        {"reference_windows", wm_->reference_windows()}, {"pca_components", wm_->pca_components()}}},
      {"channels", channels},
  };
  // A crafted store's names may hold invalid UTF-8 (the probes' names never do): U+FFFD, not a throw.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string BaselineModel::encode() const {
  ByteWriter payload;
  section(payload, "META", metadata_json());
  ByteWriter wm;
  wm_->save(wm);
  section(payload, "WMOD", wm.bytes());
  const std::string& body = payload.bytes();

  std::string out(kModelMagic);
  ByteWriter version;
  version.u32(format_version_);
  out += version.bytes();
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (!cctx) throw std::bad_alloc();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, kZstdLevel);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
  const std::size_t at = out.size();
  out.resize(at + ZSTD_compressBound(body.size()));
  const std::size_t n = ZSTD_compress2(cctx, out.data() + at, out.size() - at, body.data(), body.size());
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) throw ModelError(std::string("cannot compress the model: ") + ZSTD_getErrorName(n));
  out.resize(at + n);
  return out;
}

BaselineModel BaselineModel::decode(std::string_view bytes, const std::string& name) {
  if (bytes.size() < kModelMagic.size() || bytes.substr(0, kModelMagic.size()) != kModelMagic)
    fail(name, "not a Reveal model file (no REVEALMD header)");
  if (bytes.size() < kHeaderBytes) fail(name, "model file is truncated (no format version)");
  ByteReader head(bytes.substr(kModelMagic.size(), 4));
  const std::uint32_t version = head.u32();
  if (version != kModelFormatVersion)
    fail(name, "model format version " + std::to_string(version) + " is not supported (this reveal reads version " +
                   std::to_string(kModelFormatVersion) + "); train the model again with this reveal");
  const std::string_view frame = bytes.substr(kHeaderBytes);
  if (frame.empty()) fail(name, "model file is truncated (no payload)");
  const std::size_t frame_size = ZSTD_findFrameCompressedSize(frame.data(), frame.size());
  if (ZSTD_isError(frame_size)) fail(name, "model payload is truncated or corrupt");
  if (frame_size != frame.size()) fail(name, "model file has unexpected bytes after its payload");
  const std::string body = decompress_payload(frame, name);

  BaselineModel m{Fields{}};
  m.source_ = name;
  m.format_version_ = version;
  std::string_view meta, wmod;  // views into body
  bool have_meta = false, have_wmod = false;
  std::size_t unknown_n = 0;
  std::uint64_t unknown_bytes = 0;
  try {
    ByteReader in(body);
    while (in.remaining() > 0) {
      std::string tag(4, '\0');
      for (char& c : tag) c = char(in.u8());
      const std::string_view bytes_of = in.str_view();
      if (tag == "META" && !have_meta) { meta = bytes_of; have_meta = true; }
      else if (tag == "WMOD" && have_meta && !have_wmod) { wmod = bytes_of; have_wmod = true; }
      else if (tag == "META" || tag == "WMOD") fail(name, "corrupt model payload (section " + tag + " out of order)");
      else {  // sections of a later minor revision, skipped: a few, and small
        ++unknown_n;
        unknown_bytes += bytes_of.size();
        if (unknown_n > kModelMaxUnknownSections || unknown_bytes > kModelMaxUnknownBytes)
          fail(name, "corrupt model payload (" + std::to_string(unknown_n) + " unknown sections of " +
                         std::to_string(unknown_bytes) + " bytes, over the " + std::to_string(kModelMaxUnknownSections) +
                         " sections and " + mib(kModelMaxUnknownBytes) + " a reader skips)");
      }
    }
    if (!have_meta || !have_wmod) fail(name, "corrupt model payload (a required section is missing)");
    ByteReader wr(wmod);
    m.wm_ = std::make_shared<const pipeline::WindowModel>(pipeline::WindowModel::load(wr));
    wr.expect_end();
  } catch (const DecodeError& e) {
    fail(name, e.what());
  }

  try {
    using nlohmann::json;
    const json j = json::parse(meta);
    if (j.at("format").get<std::string>() != "reveal.model" || j.at("format_version").get<std::uint32_t>() != version)
      fail(name, "corrupt model metadata (format)");
    m.reveal_version_ = j.at("reveal_version").get<std::string>();
    m.created_unix_ns_ = j.at("created_unix_ns").get<std::int64_t>();
    for (const auto& t : j.at("training")) {
      TrainingStore ts;
      ts.path = t.at("path").get<std::string>();
      ts.hostname = t.at("hostname").get<std::string>();
      ts.samples = t.at("samples").get<std::size_t>();
      ts.windows = t.at("windows").get<std::size_t>();
      ts.start_unix_ns = t.at("start_unix_ns").get<std::int64_t>();
      ts.end_unix_ns = t.at("end_unix_ns").get<std::int64_t>();
      ts.interval_s = t.at("interval_s").get<double>();
      m.training_.push_back(std::move(ts));
    }
    const json& w = j.at("window");
    m.opts_.window.length = w.at("length").get<std::size_t>();
    m.opts_.window.stride = w.at("stride").get<std::size_t>();
    m.opts_.window.trail = w.at("trail").get<std::size_t>();
    if (m.opts_.window.length < 1 || m.opts_.window.stride < 1 || m.opts_.window.trail > kMaxTrail)
      fail(name, "corrupt model metadata (window)");
    const json& d = j.at("detect");
    m.opts_.pca_variance = d.at("pca_variance").get<double>();
    const auto& wm = *m.wm_;
    m.opts_.z_cut = wm.z_cut();
    m.opts_.if_cut = wm.if_cut();
    m.opts_.pca_cut = wm.pca_cut();
    m.opts_.pca = wm.pca_use();
    m.opts_.prune_r = wm.prune_r();
    m.opts_.seed = wm.seed();
    const json& chans = j.at("channels");
    if (chans.size() != wm.n_channels()) fail(name, "corrupt model (metadata and model disagree on the channels)");
    std::set<std::string> names;
    for (std::size_t k = 0; k < chans.size(); ++k) {
      ChannelInfo ch;
      ch.name = chans[k].at("name").get<std::string>();
      ch.unit = chans[k].at("unit").get<std::string>();
      const auto sub = parse_subsystem(chans[k].at("subsystem").get<std::string>());
      if (!sub || *sub != wm.subsystems()[k] || !names.insert(ch.name).second)
        fail(name, "corrupt model (metadata and model disagree on the channels)");
      ch.subsystem = *sub;
      m.channels_.push_back(std::move(ch));
    }
  } catch (const nlohmann::json::exception& e) {
    fail(name, std::string("corrupt model metadata (") + e.what() + ")");
  }
  return m;
}

void BaselineModel::save(const std::string& path) const {
  const std::string bytes = encode();
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) fail(path, std::string("cannot write the model: ") + std::strerror(errno ? errno : EIO));
    f.write(bytes.data(), std::streamsize(bytes.size()));
    f.flush();
    if (!f) {
      const int err = errno;
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      fail(path, std::string("cannot write the model: ") + std::strerror(err ? err : EIO));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    fail(path, "cannot write the model: " + ec.message());
  }
}

BaselineModel BaselineModel::load(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(path, "no such file");
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, not a model file");
  // No model file is larger than its header and the frame of the largest payload.
  const std::uint64_t max_file = kHeaderBytes + ZSTD_compressBound(std::size_t(kMaxPayload));
  const auto file_bytes = std::filesystem::file_size(path, ec);
  if (!ec && file_bytes > max_file)
    fail(path, "is " + mib(file_bytes) + ", larger than any model file (at most " + mib(max_file) + ")");
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, std::string("cannot read: ") + std::strerror(errno));
  std::string bytes;
  if (!ec) bytes.reserve(std::size_t(file_bytes));
  char buf[1 << 16];
  while (f.read(buf, sizeof buf) || f.gcount() > 0) {
    bytes.append(buf, std::size_t(f.gcount()));
    if (bytes.size() > max_file) fail(path, "is larger than any model file (at most " + mib(max_file) + ")");
  }
  if (f.bad()) fail(path, "cannot read the model file");
  if (bytes.empty()) fail(path, "empty file, not a Reveal model file");
  return decode(bytes, path);
}

bool is_model_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;  // a FIFO would block the read
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  char magic[kModelMagic.size()] = {};
  f.read(magic, std::streamsize(sizeof magic));
  return f.gcount() == std::streamsize(sizeof magic) && std::string_view(magic, sizeof magic) == kModelMagic;
}

DetectOptions BaselineModel::scoring_options(const DetectOptions& call) const {
  DetectOptions o = opts_;
  o.incident = call.incident;
  o.settle_s = call.settle_s;
  o.top_channels = call.top_channels;
  o.window_z = call.window_z;
  o.workload_changes = call.workload_changes;
  o.symptom_windows = call.symptom_windows;
  o.false_per_day = call.false_per_day;
  o.progress = call.progress;
  return o;
}

}  // namespace reveal
