// Checks on the file names a command line gives, made before any work; each throws UsageError
// (exit 2) with a one-line message naming the flag.
#pragma once

#include <string>
#include <vector>

namespace reveal::cli {

// CLI11 hands an option its value even when it looks like a flag ("--html --json",
// "--baseline --peers"). Refuses `value` when it starts with '-' (but is not "-" alone) and no
// such file exists.
void check_not_flag(const std::string& flag, const std::string& value);

// An input file name: not empty, not a flag (as check_not_flag). `what` names it ("store",
// "--baseline").
void check_input_path(const std::string& what, const std::string& path);

// The same file twice among `inputs` ("a.db a.db", "./a.db a.db", a link and its target): one
// run compared with itself, or counted twice in a model.
void check_distinct(const std::vector<std::string>& inputs);

// `out` names one of `inputs` (std::filesystem::equivalent), or the SQLite side file of one
// (INPUT-journal, -wal, -shm, and the store's INPUT-head), which would make the store unreadable.
void check_not_input(const std::string& out, const std::vector<std::string>& inputs, const std::string& flag);

}  // namespace reveal::cli
