// One function per subcommand; each registers its options on `app` and returns the action
// to run when that subcommand was chosen. Exit codes: 0 ok, 1 incidents found (detect or report
// --fail-on-incident), 2 usage, 3 input error; `record -- CMD` returns CMD's exit status.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "reveal/sampler.h"
#include "reveal/version.h"  // kVersion: stores, --version, man page

namespace reveal::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitIncidents = 1;  // detect/report --fail-on-incident found some
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInput = 3;

// A bad flag value found after parsing (exit 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Action = std::function<int()>;
Action add_probes(CLI::App& app);
Action add_record(CLI::App& app);
Action add_detect(CLI::App& app);
Action add_report(CLI::App& app);  // detect.cpp: the HTML report (html_report.h)
Action add_train(CLI::App& app);  // train.cpp: a baseline model file from known-good stores
Action add_config(CLI::App& app);  // config.cpp: config show|diff
Action add_docs(CLI::App& app);    // docs.cpp: docs metrics|man|completion
Action add_info(CLI::App& app);    // info.cpp: what a store holds
Action add_export(CLI::App& app);  // export.cpp: a store as wide CSV
Action add_import(CLI::App& app);  // import.cpp: foreign telemetry into a store
#ifdef REVEAL_WITH_HTTP
Action add_agent(CLI::App& app);   // agent.cpp: the per-host daemon
#endif

// make_probes() with an unknown name reported as a UsageError.
std::vector<std::unique_ptr<Probe>> select_probes(const std::vector<std::string>& include,
                                                  const std::vector<std::string>& exclude);

// Throws std::runtime_error (exit 3) unless `root` is an existing directory.
void check_root(const std::string& root);

// Writes `text` to stdout and flushes; throws std::runtime_error (exit 3) when the write fails
// (a full disk, a closed pipe), so a truncated report never exits 0.
void write_stdout(const std::string& text);

// Sets `sub`'s --help footer (CLI11 footer, also read by `reveal docs man`): an "Examples:"
// section with one command per line, then "Exit status:" with the codes every subcommand shares
// and `status_lines` ("1  incidents found ...") in front of them. The man page and completion
// parse this layout (docs.cpp): keep examples one line each.
void set_help_footer(CLI::App* sub, const std::vector<std::string>& examples,
                     const std::vector<std::string>& status_lines = {});

// A command line naming a subcommand that does not exist ("reveal detcet", "reveal import
// parquet", "reveal config shoe"), as a one-line message listing the choices; nullopt otherwise.
std::optional<std::string> unknown_command(CLI::App& app, int argc, char** argv);

// A CLI11 check for a whole number in 0..2^64-1 (--seed): CLI11 alone wraps "-1" and clamps
// numbers above the range.
CLI::Validator whole_u64();

// Prints "reveal: error: <msg>" on one line to stderr.
void error(const std::string& msg);

}  // namespace reveal::cli
