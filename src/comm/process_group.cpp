// CreateProcessGroup: validates the spec and hands it to the backend that `spec.backend` names.
#include "comm/process_group.h"

#include "comm/gloo_process_group.h"
#include "comm/local_process_group.h"
#include "comm/shm_process_group.h"
#if TANDEM_WITH_NCCL
#include "comm/nccl_process_group.h"
#endif

namespace tandem::comm {

Result<std::unique_ptr<ProcessGroup>> CreateProcessGroup(const GroupSpec& spec) {
  if (spec.size < 1 || spec.rank < 0 || spec.rank >= spec.size) {
    return InvalidArgument("group '" + spec.name + "': rank " + std::to_string(spec.rank) +
                           " outside [0, " + std::to_string(spec.size) + ")");
  }
  if (spec.name.empty()) {
    return InvalidArgument(
        "group spec has an empty name; expected a name unique per group and "
        "deployment, e.g. \"tp-dp0-<port>\"");
  }
  if (spec.backend == "local") return LocalProcessGroup::Create(spec);
  if (spec.backend == "shm") return ShmProcessGroup::Create(spec);
  if (spec.backend == "gloo") return GlooProcessGroup::Create(spec);
  if (spec.backend == "nccl") {
#if TANDEM_WITH_NCCL
    return NcclProcessGroup::Create(spec);
#else
    return Unimplemented("group '" + spec.name +
                         "': backend 'nccl' requested, but this build has "
                         "no NCCL (configure with -DTANDEM_WITH_NCCL=ON on a machine with the "
                         "CUDA toolkit and NCCL)");
#endif
  }
  return InvalidArgument("group '" + spec.name + "': unknown backend '" + spec.backend +
                         "'; expected shm, gloo, local or nccl");
}

}  // namespace tandem::comm
