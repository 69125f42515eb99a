#include "reveal/version.h"

#ifndef REVEAL_VERSION
#error "REVEAL_VERSION comes from project(VERSION) in CMakeLists.txt"
#endif

namespace reveal {

const char kVersion[] = REVEAL_VERSION;

}  // namespace reveal
