// Head log of store schema v2: the samples of the chunk being filled, one record appended per
// sample with a single write(2), so that a recorder killed at any moment (kill -9, OOM) loses at
// most the sample it was writing. File "<store>-head" beside the SQLite file; emptied each time
// a chunk is committed to SQLite, removed when the recording finishes.
//
// Record (little-endian): u32 frame_bytes, then one zstd frame with a content checksum
// (XXH64, verified on read) holding
//   u64 seq, i64 t_unix_ns, u64 flags (bit 0: keyframe), then n_channels u64 words:
//   bits(value) XOR bits(value of the previous record's sample), or XOR 0 in a keyframe (the
//   first record after the log was emptied).
// A torn or corrupt record ends the log: the reader keeps every whole record before it.
// Write errors throw StoreError (one line naming the file); append() allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "reveal/matrix.h"

namespace reveal::store {

class HeadLogWriter {
 public:
  HeadLogWriter() = default;
  ~HeadLogWriter();
  HeadLogWriter(const HeadLogWriter&) = delete;
  HeadLogWriter& operator=(const HeadLogWriter&) = delete;

  // Creates (truncating) the log for rows of n_channels values.
  void open(const std::filesystem::path& path, std::size_t n_channels);
  void append(std::uint64_t seq, std::int64_t t_unix_ns, std::span<const double> row);
  // Empties the log (after its samples were committed elsewhere); the next record is a keyframe.
  void clear();
  // Closes and deletes the log file.
  void remove();

 private:
  std::string path_;
  int fd_ = -1;
  void* cctx_ = nullptr;  // ZSTD_CCtx*
  bool keyframe_ = true;
  std::vector<std::uint64_t> prev_, record_;
  std::vector<char> out_;
};

// Samples of a head log: every whole record whose seq >= first_seq, in order, while seqs are
// consecutive. Missing file: nothing. Throws StoreError only when the file exists and cannot be
// read; a damaged tail just ends the log.
struct HeadSamples {
  std::vector<std::int64_t> t_unix_ns;
  Matrix values;  // samples × n_channels
};
HeadSamples read_head_log(const std::filesystem::path& path, std::size_t n_channels,
                          std::uint64_t first_seq);

}  // namespace reveal::store
