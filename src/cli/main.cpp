// reveal: anomaly detection for ML infrastructure from hardware telemetry.
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "commands.h"
#include "util/open_files_limit.h"

namespace reveal::cli {
void set_help_footer(CLI::App* sub, const std::vector<std::string>& examples,
                     const std::vector<std::string>& status_lines) {
  std::string f = "Examples:\n";
  for (const auto& e : examples) f += "  " + e + "\n";
  f += "\nExit status:\n  0  success\n";
  for (const auto& l : status_lines) f += "  " + l + "\n";
  f += "  2  usage error: an unknown flag or a bad value (one line on stderr names it)\n"
       "  3  input error: a missing, empty or corrupt store or model file, a failed read or write";
  sub->footer(f);
}

void error(const std::string& msg) {
  // One line, whatever a file name holds: control characters as \n, \t, \xHH.
  std::string line;
  for (const char c : msg) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') line += "\\n";
    else if (c == '\t') line += "\\t";
    else if (u < 0x20 || u == 0x7f) line += fmt::format("\\x{:02x}", u);
    else line += c;
  }
  std::fprintf(stderr, "reveal: error: %s\n", line.c_str());
}
void write_stdout(const std::string& text) {
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
  if (!ok) throw std::runtime_error(std::string("cannot write to standard output: ") + std::strerror(errno ? errno : EIO));
}
void check_root(const std::string& root) {
  std::error_code ec;
  if (root.empty() || !std::filesystem::is_directory(root, ec))
    throw std::runtime_error("--root '" + root + "' is not a directory");
}
std::vector<std::unique_ptr<Probe>> select_probes(const std::vector<std::string>& include,
                                                  const std::vector<std::string>& exclude) {
  try {
    return make_probes(include, exclude);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}
// Names of `at`'s subcommands that --help lists (a hidden one has an empty group).
std::string visible_subcommands(CLI::App* at) {
  std::string names;
  for (auto* sub : at->get_subcommands({}))
    if (!sub->get_group().empty()) names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

CLI::Validator whole_u64() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size())
          return "'" + text + "' is not a whole number in 0..18446744073709551615";
        return {};
      },
      "");
}

std::optional<std::string> unknown_command(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  for (int i = 1; i < argc && at->get_require_subcommand_min() > 0; ++i) {
    if (argv[i][0] == '-') return std::nullopt;
    CLI::App* found = nullptr;
    for (auto* sub : at->get_subcommands({}))
      if (sub->get_name() == argv[i]) found = sub;
    if (found) {
      at = found;
      continue;
    }
    if (at == &app)
      return std::string("unknown command '") + argv[i] + "' (commands: " + visible_subcommands(at) + "; see --help)";
    const std::string noun = at->get_name() == "import" ? "format" : "command";
    return "unknown " + at->get_name() + " " + noun + " '" + argv[i] + "' (" + noun + "s: " + visible_subcommands(at) +
           "; see reveal " + at->get_name() + " --help)";
  }
  return std::nullopt;
}
}  // namespace reveal::cli

namespace {
// `rc`, or 3 when what --help or --version printed could not be written (> /dev/full).
int flushed(int rc) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return rc;
  reveal::cli::error(std::string("cannot write to standard output: ") + std::strerror(errno ? errno : EIO));
  return reveal::cli::kExitInput;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace reveal::cli;
  // Probes keep a descriptor per file they read; a big host needs thousands (open_files_limit.h).
  reveal::raise_open_files_limit();
  CLI::App app{"reveal: finds anomalies in ML infrastructure from hardware telemetry alone"};
  app.require_subcommand(1);
  std::map<CLI::App*, Action> actions;
  for (auto add : {add_probes, add_record, add_detect, add_report, add_train, add_config, add_info, add_export, add_import,
#ifdef REVEAL_WITH_HTTP
                   add_agent,
#endif
                   add_docs}) {
    const std::size_t before = app.get_subcommands({}).size();
    Action a = add(app);
    actions[app.get_subcommands({}).at(before)] = std::move(a);
  }
  set_help_footer(&app,
                  {"reveal record -o run.db -- python3 train.py", "reveal detect run.db",
                   "reveal detect run.db --baseline good.model --fail-on-incident", "reveal COMMAND --help"},
                  {"1  reveal detect or report --fail-on-incident: incidents found",
                   "N  reveal record -o run.db -- CMD: CMD's exit status"});
  app.set_version_flag("--version", std::string("reveal ") + reveal::kVersion, "Print reveal's version and exit");
  if (const auto msg = unknown_command(app, argc, argv)) {
    error(*msg);
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return flushed(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return flushed(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return flushed(app.exit(e));
  } catch (const CLI::ParseError& e) {
    error(e.what());
    return kExitUsage;
  }
  for (auto& [sub, action] : actions) {
    if (!sub->parsed()) continue;
    try {
      return action();
    } catch (const CLI::Error& e) {
      error(e.what());
      return kExitUsage;
    } catch (const UsageError& e) {
      error(e.what());
      return kExitUsage;
    } catch (const std::exception& e) {
      error(e.what());
      return kExitInput;
    }
  }
  return kExitUsage;
}
