// What the store's writer (sqlite_store.cpp) and reader (store_reader.cpp) share: the one-line
// StoreError naming the file, a prepared statement that finalizes itself, the head log's path.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "reveal/store.h"

namespace reveal::store {

[[noreturn]] inline void fail(const std::filesystem::path& p, const std::string& what) {
  throw StoreError(p.string() + ": " + what);
}

struct Stmt {
  sqlite3_stmt* s = nullptr;
  Stmt(sqlite3* db, const std::filesystem::path& p, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) fail(p, sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(s); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  std::string text(int col) const {
    auto* t = sqlite3_column_text(s, col);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
};

// <store>-head: the samples of the chunk being filled (head_log.h).
inline std::filesystem::path head_path(const std::filesystem::path& p) { return p.string() + "-head"; }

}  // namespace reveal::store
