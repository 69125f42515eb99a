// prepare_series: the feature pipeline up to windows; contract in include/reveal/features.h.
#include "reveal/features.h"

namespace reveal {

Series prepare_series(const Recording& r) {
  Series s = to_rates(r);
  add_derived(s);
  return s;
}

}  // namespace reveal
