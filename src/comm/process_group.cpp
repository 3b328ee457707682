// CreateProcessGroup: validates the spec and hands it to the backend that `spec.backend` names.
#include "comm/process_group.h"

#include "comm/gloo_process_group.h"
#include "comm/local_process_group.h"
#include "comm/shm_process_group.h"

namespace tandem::comm {

Result<std::unique_ptr<ProcessGroup>> CreateProcessGroup(const GroupSpec& spec) {
  if (spec.size < 1 || spec.rank < 0 || spec.rank >= spec.size) {
    return InvalidArgument("group '" + spec.name + "': rank " + std::to_string(spec.rank) +
                           " outside [0, " + std::to_string(spec.size) + ")");
  }
  if (spec.name.empty()) {
    return InvalidArgument("group spec has an empty name; expected a name unique per group and "
                           "deployment, e.g. \"tp-dp0-<port>\"");
  }
  if (spec.backend == "local") return LocalProcessGroup::Create(spec);
  if (spec.backend == "shm") return ShmProcessGroup::Create(spec);
  if (spec.backend == "gloo") return GlooProcessGroup::Create(spec);
  return InvalidArgument("group '" + spec.name + "': unknown backend '" + spec.backend +
                         "'; expected shm, gloo or local");
}

}  // namespace tandem::comm
