// Programmatic dependent launch, device side. Both are no-ops when the launch carries no programmatic dependency
// (cudaLaunchAttributeProgrammaticStreamSerialization), so a kernel calls them unconditionally and the host decides.
#pragma once

namespace tgemm::pdl {

// Lets the next grid in the stream start launching (its blocks run up to their own wait() meanwhile).
__device__ __forceinline__ void launch_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
// Waits until the previous grid has completed and its memory operations are visible; nothing that reads what it
// wrote, or writes what it reads, may come before this.
__device__ __forceinline__ void wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

}  // namespace tgemm::pdl
