// A store written atomically (reveal/ingest.h write_store, and the importers that stream): into
// ".reveal-import-<pid>" beside the output first, renamed over it once finished, so that a
// failure (or Ctrl-C) never leaves a half-written store.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "util/remove_on_signal.h"

namespace reveal::importer {

class AtomicStore {
 public:
  // Resolves `out` (a symbolic link stays a link: the store it leads to is replaced) and checks
  // that it may be replaced: only a previous store, never a device, a directory, another file or
  // a store a recorder still holds. Throws ImportError.
  explicit AtomicStore(const std::filesystem::path& out);
  // Removes the temporary store unless commit() succeeded.
  ~AtomicStore();
  AtomicStore(const AtomicStore&) = delete;
  AtomicStore& operator=(const AtomicStore&) = delete;

  // Where to write the store (its StoreWriter finished and destroyed before commit()).
  const std::filesystem::path& temp() const { return tmp_; }
  // Gives the temporary store the replaced store's permissions, removes that store's side files
  // (head log, WAL) and renames the temporary over it. Throws ImportError.
  void commit();

 private:
  std::filesystem::path out_, tmp_;
  mode_t keep_mode_ = 0;
  std::vector<std::unique_ptr<RemoveOnSignal>> guards_;
  bool committed_ = false;
};

}  // namespace reveal::importer
