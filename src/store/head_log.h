// Head log of store schema v2: the samples of the chunk being filled, one record appended per
// sample with a single write(2), so that a recorder killed at any moment (kill -9, OOM) loses at
// most the sample it was writing. File "<store>-head" beside the SQLite file; emptied each time
// a chunk is committed to SQLite, removed when the recording finishes.
//
// Record (little-endian u64 words after the first two fields):
//   u32 payload_bytes, u64 check, then the payload:
//   u64 seq, i64 t_unix_ns, u64 (n_channels << 1 | keyframe),
//   u64 changed[ceil(n_channels / 64)]  -- bit c set when channel c's word below is non-zero,
//   one u64 per set bit, in channel order: bits(value) XOR bits(value of the previous record's
//   sample), or XOR 0 in a keyframe (the first record after the log was emptied).
// `check` is a 64-bit multiply-xorshift hash of the payload words: a torn write (zero-filled or
// cut short) or a damaged byte shows as a mismatch. No compression: values that did not move
// cost one bit, and a 1 Hz host's ~780 channels make records of 2-4 KB, gone at the next chunk.
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
  bool keyframe_ = true;
  std::vector<std::uint64_t> prev_;    // bit patterns of the previous sample
  std::vector<std::uint64_t> record_;  // [u32 size + pad][check][payload], sized for the worst case
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
