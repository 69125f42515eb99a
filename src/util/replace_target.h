// The file an atomic write (a temporary file renamed into place) should replace, given the path
// a user named: the path itself, or where its symbolic links lead, followed hop by hop with each
// directory resolved for real (a lexical "dir/.." is wrong when dir is a link). Writing there
// keeps a link a link, and creates the file a dangling link names.
// Used by the CLI's OutputFile and import's write_store.
#pragma once

#include <filesystem>
#include <optional>

namespace reveal {

// nullopt when a hop lies under /dev or /proc (/dev/stderr, /proc/self/fd/N: a stream or device
// to write in place, never to rename over). Throws std::filesystem::filesystem_error when a
// directory on the way does not exist or cannot be read, or after 40 links (a loop).
std::optional<std::filesystem::path> replace_target(const std::filesystem::path& path);

}  // namespace reveal
