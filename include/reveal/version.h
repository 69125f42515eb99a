// Reveal's version, e.g. "0.1.0". It is written once, in project(VERSION) of CMakeLists.txt,
// which hands it to src/util/version.cpp as REVEAL_VERSION; everything that names a version
// (stores and trained models, `reveal --version`, the man page, the agent's reveal_build_info)
// reads it here.
#pragma once

namespace reveal {

extern const char kVersion[];  // NUL-terminated, "MAJOR.MINOR.PATCH"

}  // namespace reveal
