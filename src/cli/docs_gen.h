// The man page and the bash completion script, generated from the CLI11 App tree that --help
// uses (`reveal docs man`, `reveal docs completion bash`): every visible subcommand (nested ones
// too: "import csv", "config show"), its description, options with their help strings,
// defaults and IsMember choices, and the examples and exit status of its set_help_footer()
// footer. Nothing here names a subcommand or flag by hand. docs/reveal.1 and docs/reveal.bash
// are their committed output (tests/cli/cli_docs_test.sh keeps them current).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace reveal::cli {

// One visible subcommand of the tree, depth first: path "detect", "import csv".
struct CommandNode {
  std::string path;
  const CLI::App* app;
};
std::vector<CommandNode> visible_commands(const CLI::App& root);

// A footer's section ("Examples" or "Exit status"): its indented lines, unindented.
std::vector<std::string> footer_section(const std::string& footer, const std::string& title);

// The choices of an option checked with CLI::IsMember ("report", "fuse", "off"); empty otherwise.
std::vector<std::string> option_choices(const CLI::Option& opt);

// troff man page, section 1: NAME, SYNOPSIS, DESCRIPTION, COMMANDS (each with its options),
// EXAMPLES, EXIT STATUS, SEE ALSO. Reproducible (no date).
std::string man_page(const CLI::App& root, const std::string& version);

// A bash completion script defining _reveal and `complete -F _reveal reveal`: subcommands at
// each level, each command's flags, IsMember values after their option, stores and model files
// (*.db, *.model, directories) for positional store arguments, any file otherwise, commands
// after `record ... --`.
std::string bash_completion(const CLI::App& root);

}  // namespace reveal::cli
