#include "telemetry/procfs/net_snmp.h"

#include <array>
#include <cmath>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "proc.net.snmp";

struct Special {
  std::string_view proto, field;
  Kind kind;
  std::string_view unit;
};
constexpr std::array<Special, 8> kSpecial{{
    {"Tcp", "CurrEstab", Kind::gauge, "count"},
    {"Tcp", "RtoAlgorithm", Kind::gauge, "count"},
    {"Tcp", "RtoMin", Kind::gauge, "ms"},
    {"Tcp", "RtoMax", Kind::gauge, "ms"},
    {"Tcp", "MaxConn", Kind::gauge, "count"},
    {"MPTcpExt", "MPCurrEstab", Kind::gauge, "count"},
    {"Ip", "Forwarding", Kind::state, "count"},
    {"Ip", "DefaultTTL", Kind::state, "count"},
}};

ChannelInfo make_channel(std::string_view proto, std::string_view field) {
  ChannelInfo c;
  std::string f = std::string(proto) + "_" + std::string(field);
  c.name = channel_name(kSource, f);
  c.kind = Kind::counter;
  c.unit = field.ends_with("Octets") ? "bytes" : "count";
  c.subsystem = Subsystem::network;
  c.help = std::string(proto) + " MIB " + std::string(field);
  for (const auto& s : kSpecial)
    if (s.proto == proto && s.field == field) {
      c.kind = s.kind;
      c.unit = s.unit;
    }
  return c;
}

// "Tcp: a b c" -> proto "Tcp", rest " a b c".
bool split_proto(std::string_view line, std::string_view& proto, std::string_view& rest) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  proto = line.substr(0, colon);
  rest = line.substr(colon + 1);
  return true;
}

// Calls fn(proto, names, values) for each header line followed by a value line of the same
// protocol; a header without its value line is skipped without misaligning the rest.
template <class Fn>
void for_each_block(std::string_view text, Fn&& fn) {
  std::string_view pending_proto, pending_names;
  while (!text.empty()) {
    std::string_view proto, rest;
    if (!split_proto(next_line(text), proto, rest)) {
      pending_proto = {};
      continue;
    }
    if (!pending_proto.empty() && proto == pending_proto) {
      fn(proto, pending_names, rest);
      pending_proto = {};
    } else {
      pending_proto = proto;
      pending_names = rest;
    }
  }
}
}  // namespace

bool ProcNetSnmpProbe::load(MibFile& mib, std::string_view text) {
  const std::size_t before = channels_.size();
  for_each_block(text,
                 [&](std::string_view proto, std::string_view names, std::string_view values) {
                   if (mib.protos.find(proto) != KeyIndex::npos) return;  // duplicate block
                   Header h;
                   h.text_offset = static_cast<std::uint32_t>(mib.headers.size());
                   h.text_size = static_cast<std::uint32_t>(names.size());
                   h.columns_offset = static_cast<std::uint32_t>(mib.column_slots.size());
                   const std::string_view header = names;
                   KeyIndex fields;
                   for (std::string_view n = next_token(names), v = next_token(values);
                        !n.empty() && !v.empty(); n = next_token(names), v = next_token(values)) {
                     ++h.columns;
                     if (!parse_i64(v)) {
                       mib.column_slots.push_back(kNoSlot);
                       continue;
                     }
                     mib.column_slots.push_back(static_cast<std::uint32_t>(channels_.size()));
                     fields.add(n, channels_.size());
                     channels_.push_back(make_channel(proto, n));
                   }
                   if (fields.size() == 0) {
                     mib.column_slots.resize(h.columns_offset);
                     return;
                   }
                   mib.headers.append(header);
                   mib.protos.add(proto, mib.fields.size());
                   mib.fields.push_back(std::move(fields));
                   mib.header_at_open.push_back(h);
                 });
  return channels_.size() > before;
}

void ProcNetSnmpProbe::parse(MibFile& mib, std::string_view text, std::span<double> out) {
  for_each_block(text,
                 [&](std::string_view proto, std::string_view names, std::string_view values) {
                   const std::size_t p = mib.protos.find(proto);
                   if (p == KeyIndex::npos) return;
                   const std::size_t block = mib.protos[p].slot;
                   const Header& h = mib.header_at_open[block];
                   if (names == std::string_view(mib.headers).substr(h.text_offset, h.text_size)) {
                     // Same header as at open: values by column, no name lookups.
                     const std::uint32_t* slot = mib.column_slots.data() + h.columns_offset;
                     for (std::uint32_t c = 0; c < h.columns; ++c) {
                       values = skip_spaces(values);
                       if (values.empty()) break;  // short value line: the rest stay NaN
                       if (slot[c] == kNoSlot)
                         next_token(values);
                       else
                         out[slot[c]] = next_i64_as_double(values);
                     }
                     return;
                   }
                   // The layout changed since open: find each field by name.
                   KeyIndex& fields = mib.fields[block];
                   for (std::string_view n = next_token(names), v = next_token(values);
                        !n.empty() && !v.empty(); n = next_token(names), v = next_token(values)) {
                     const std::size_t f = fields.find(n);
                     if (f == KeyIndex::npos) continue;
                     auto x = parse_i64(v);
                     out[fields[f].slot] = x ? static_cast<double>(*x) : std::nan("");
                   }
                 });
}

ProbeStatus ProcNetSnmpProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  files_.clear();
  std::string first_error;
  for (const char* rel : {"proc/net/snmp", "proc/net/netstat"}) {
    MibFile mib;
    std::string err;
    if (!mib.file.open(root / rel, &err)) {
      if (first_error.empty()) first_error = err;
      continue;
    }
    auto text = mib.file.read();
    if (text && load(mib, *text)) files_.push_back(std::move(mib));
  }
  if (channels_.empty())
    return {false, first_error.empty() ? "no MIB counters in /proc/net/snmp" : first_error};
  return {true, {}};
}

void ProcNetSnmpProbe::sample(std::span<double> out) {
  for (double& v : out) v = std::nan("");
  for (auto& mib : files_)
    if (auto text = mib.file.read()) parse(mib, *text, out);
}

}  // namespace reveal::telemetry
