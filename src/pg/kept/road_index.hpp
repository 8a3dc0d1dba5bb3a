// Kept graphs, the road index of a form: made from the form (ordered, or from the order kept for
// the graph while its topology is the same), customized on the CPU or the GPU, written into a DSM
// segment of its own and mapped by every session; its making is claimed by one process at a time.
#pragma once

#include "kept/registry.hpp"
#include "kept/sessions.hpp"

namespace gpu_routing::pg {
struct KeptGraphUse;
enum class IndexCustomization;  // settings.hpp
}  // namespace gpu_routing::pg

namespace gpu_routing::pg::kept {

// gpu_routing.test_index_pause: a test's advisory lock key that the maker of a road index waits
// on (shared) before keeping it, so that a test can switch the index off in between; 0: none.
extern int g_test_index_pause;

// Where an index is customized: the call's (or the launching call's) settings.
// (And the test hook gpu_routing.test_index_pause, which a worker gets from its launching call.)
struct CustomizationChoice {
  IndexCustomization setting{};  // kAuto
  bool device_cpu = false;       // gpu_routing.device = cpu: never touch CUDA
  int threads = 0;
  int test_pause_key = 0;
};

CustomizationChoice customization_choice();

// Where the graph's kept order lies, read (with the lock held) when a process claims the making
// of a form's index.
struct OrderPlace {
  dsm_handle handle = DSM_HANDLE_INVALID;
  uint64 fingerprint = 0;
  int64 vertices = -1;
  Size topology_offset = 0;
  Size topology_bytes = 0;
};

OrderPlace order_place(const SharedOrder* order);

// Lock held. Claims the making of form f's index for this process.
void claim_index(SharedForm& form, int f, bool in_worker);
// Lock held. Maps the ready index of `entry`'s form unless the session has it mapped already.
void map_index(SessionGraph* entry, const SharedForm& form);
// Makes the index of `entry`'s form, whose making this process has claimed (claim_index), from the
// kept order at `order` where it fits; `maker` names who made it in the call's notes.
void make_claimed_index(const Registration& reg, bool directed, SessionGraph* entry,
                        const OrderPlace& order, const char* maker,
                        const CustomizationChoice& choice, KeptGraphUse* use);

}  // namespace gpu_routing::pg::kept
