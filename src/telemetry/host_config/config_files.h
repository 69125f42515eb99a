// Internal to src/telemetry/host_config: small-file reading for the configuration snapshot and the
// per-area readers that read_config() composes. Plain open/read, no fds kept: the snapshot is
// re-read every ~10 s, not per sample, so allocating here is fine.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/recording.h"

namespace reveal::telemetry::config {

// Up to `max_bytes` of the file at `path`; nullopt when it cannot be opened or read.
std::optional<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes = 65536);

// The file's content with surrounding whitespace trimmed; nullopt when unreadable or empty.
std::optional<std::string> read_value(const std::filesystem::path& path);

// The choice in brackets of a sysfs multiple-choice file ("always [madvise] never" ->
// "madvise"); the trimmed text itself when there is no bracket.
std::string bracketed_choice(std::string_view text);

// Names of the entries of `dir` (files, dirs, links), sorted; empty when `dir` is unreadable.
std::vector<std::string> list_dir(const std::filesystem::path& dir);

// Sets out[key] from read_value(path) if that gives a value.
void put_value(ConfigSnapshot& out, const std::string& key, const std::filesystem::path& path);

// Per-area readers; see the key list in reveal/host_config.h.
void read_kernel_config(const std::filesystem::path& root, ConfigSnapshot& out);  // kernel.*, vm.*, hugepages.*, thp.*
void read_cpu_config(const std::filesystem::path& root, ConfigSnapshot& out);     // cpu.*, smt.*
void read_net_config(const std::filesystem::path& root, ConfigSnapshot& out);     // net.*, rdma.*
void read_driver_config(const std::filesystem::path& root, ConfigSnapshot& out);  // driver.*

}  // namespace reveal::telemetry::config
