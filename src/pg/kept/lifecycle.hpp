// Kept graphs, the lifecycle of what a backend claims: the form it is building and the road index
// it is making (given back on an error, a cancel, a subtransaction's abort or the backend's exit,
// so another session takes over), the graphs its transaction registered or switched off (undone
// or finished at commit and abort), and the transaction callbacks that run change tracking.
#pragma once

#include "kept/forms.hpp"

namespace gpu_routing::pg::kept {

// The form this backend is building, or -1; the form whose road index it is making (its handle
// identifies the form), or -1.
extern int g_building_form;
extern int g_building_index;
extern dsm_handle g_building_index_form;

// From _PG_init: the transaction callbacks.
void lifecycle_init();
// Gives back this backend's claims on a form being built (and its index).
void abandon_build();
void abandon_index_build();
// The exit callback that gives claims back and takes this session's device bytes back.
void register_exit_cleanup();
// gpu_graph_create and gpu_graph_refresh: the graph was registered (or refreshed) by this
// transaction, after it had written when `wrote_before`.
void remember_registration(int64 id, bool wrote_before);
// Registered or refreshed by this open transaction after it had written: its own uncommitted
// writes (made before any trigger watched the tables) must not reach a shared form.
bool registered_after_write(int64 id);
// gpu_graph_index(name, false): the graph's indexes are freed again at commit.
void note_switched_off(int64 id);

}  // namespace gpu_routing::pg::kept
