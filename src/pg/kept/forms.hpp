// Kept graphs, the bottom layer: what every backend of the server shares in shared memory (the
// built forms of registered graphs with their road indexes, the contraction orders kept for
// re-making those, the tracked tables' versions), one LWLock over all of it, and its memory
// budget, gpu_routing.graph_memory (eviction). Functions marked "lock held" run with
// g_shared->lock held exclusively (or shared where they only read); none of them raises.
#pragma once

#include <cstddef>
#include <string>

#include "postgres_headers.hpp"

extern "C" {
#include "storage/condition_variable.h"
#include "storage/dsm.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"
}

namespace gpu_routing::pg::kept {

constexpr int kMaxForms = 128;          // built forms in shared memory, all databases
constexpr int kMaxTablesPerGraph = 32;  // tables and views one graph's query reads
constexpr int kMaxTrackedTables = 1024;

enum FormState : int { kFormFree = 0, kFormBuilding = 1, kFormReady = 2 };
enum IndexState : int { kIndexNone = 0, kIndexBuilding = 1, kIndexReady = 2 };

// One built (or building) form of a registered graph.
struct SharedForm {
  int state;
  char name[64];
  Oid database;
  int64 graph_id;
  int64 generation;
  bool directed;
  int builder_pid;
  dsm_handle handle;
  Size bytes;
  int64 vertices, arcs, edge_rows;
  // far_arc_share() of the form's graph, measured by its builder: auto reads it on every call,
  // and measuring it again in each session faulted in a thousand pages of the segment (0.3 ms of
  // a new session's first call on New York). Negative: not measured.
  double far_arc_share;
  int table_count;  // 0 for refresh => 'manual': never stale
  Oid tables[kMaxTablesPerGraph];
  uint64 table_versions[kMaxTablesPerGraph];
  TimestampTz built_at, last_used;
  double build_ms;
  int64 calls;
  int64 device_bytes;  // held by sessions' kept GPU engines (one device copy per session for now)
  // The road index of this form (a customized contraction hierarchy image, Cch::write_image),
  // made by the first call that wants it; never outlives its form.
  int index_state;
  int index_builder_pid;
  bool index_in_worker;  // the builder is a background worker (gpu_routing_index_worker_main)
  dsm_handle index_handle;
  Size index_bytes;
  double index_order_ms;  // 0 when the order was reused from the graph's earlier form
  double index_hierarchy_ms, index_customization_ms;
  bool index_on_gpu;  // customized on the GPU (gpu_routing.index_customization)
  // Built during recovery (a hot standby), where no commit raises the tables' versions: labelled
  // instead by the change log's sum under the build's snapshot (change_log.hpp). Never served
  // once recovery has ended, since the promoted server's versions count its own commits only.
  bool built_in_recovery;
  int64 change_sum;
};

// The contraction order of a graph's road index, kept apart from its forms: a committed change
// replaces the form (and its index), and the next index reuses the order while the topology is
// the same (only the hierarchy and the customization are made again). Its presence is what marks
// a graph as wanting an index. The vertices by rank, as vertex ids (int64).
struct SharedOrder {
  bool used;
  char name[64];  // the graph's, for the NOTICE when it is evicted
  Oid database;
  int64 graph_id;
  bool directed;
  uint64 fingerprint;  // topology_key() of the graph it was made for
  int64 vertices;
  dsm_handle handle;
  Size bytes;
  // The hierarchy's topology image (Cch::write_topology_image) after the order's vertex ids in
  // the same segment; 0 bytes: none (the hierarchy is built again from the order).
  Size topology_offset;
  Size topology_bytes;
  double order_ms;
  TimestampTz made_at;
  TimestampTz last_used;  // made, or an index made from it: eviction goes by this
};

struct TrackedTable {
  Oid database;
  Oid relid;
  uint64 version;
  // Transactions between their pre-commit and their commit callback that changed this table.
  // While any is, its change may be visible to a snapshot but not yet in `version`: no form of
  // the table is served (calls read privately).
  int committing;
};

struct SharedState {
  LWLock* lock;
  ConditionVariable form_changed;  // a build finished or was abandoned
  int tracked_count;
  int committing_untracked;  // committing transactions whose tables could not all be marked
  TrackedTable tracked[kMaxTrackedTables];
  SharedForm forms[kMaxForms];
  SharedOrder orders[kMaxForms];
};

// Null unless the library was preloaded (the shared state exists only then).
extern SharedState* g_shared;
// gpu_routing.graph_memory, in MB (defined in resolve.cpp with the other settings).
extern int g_graph_memory_mb;

// From _PG_init while preloading: asks for the shared state and attaches it at startup.
void forms_shmem_init();

Size graph_memory_bytes();
std::string bytes_text(Size bytes);
void copy_name(char* target, size_t size, const char* text);

// Lock held. The tracked table `relid` of this database, made (version 1) where `create` and
// there is room; null otherwise.
TrackedTable* find_tracked(Oid relid, bool create);
// Lock held. The slot of the form (id, generation, directed) of this database, or -1.
int find_form(int64 id, int64 generation, bool directed);
// Lock held. Every table's version unchanged since the form's build began.
bool form_is_fresh(const SharedForm& form);

// What a call knows of the server and of its snapshot, to judge forms with: whether the server
// is in recovery (a hot standby) and then how many committed changes to the graph's tables the
// call's snapshot sees (change_log_sum).
struct CallView {
  bool in_recovery = false;
  int64 change_sum = 0;
};
// Lock held. A ready form may serve a call: its tables' versions unchanged since its snapshot
// and, on a standby, its snapshot saw every change the call's sees. A form built on a standby
// serves no call after promotion (it is rebuilt once), and none is built elsewhere in recovery.
bool form_serves(const SharedForm& form, const CallView& view);

// Lock held: freeing unpins segments; sessions still mapping one keep it until they let go.
void free_form(int f);
void free_order(SharedOrder& order);
void free_indexes_of(int64 id);
void free_orders_of(int64 id);
void free_forms_of(int64 id);
void free_older_generations(int64 id, int64 generation);
SharedOrder* find_order(int64 id, bool directed);
// Lock held. Bytes of every form, index and kept order of the server.
Size used_bytes();
// Lock held. Makes room for `bytes` of graph `name` (its road index with `for_index`); see
// forms.cpp.
bool make_room(const char* name, bool for_index, Size bytes, int building, char* problem,
               size_t size, char* evicted, size_t evicted_size);

// The slot to fill in `slots`: the first one `is_free` accepts, else among those `evictable`
// accepts the one `older` ranks first (the caller frees it), else null. One rule for every kind
// of slot (forms, kept orders, a session's mappings).
template <typename Slot, std::size_t N, typename IsFree, typename Evictable, typename Older>
Slot* free_or_oldest(Slot (&slots)[N], IsFree is_free, Evictable evictable, Older older) {
  for (Slot& slot : slots)
    if (is_free(slot)) return &slot;
  Slot* oldest = nullptr;
  for (Slot& slot : slots)
    if (evictable(slot) && (oldest == nullptr || older(slot, *oldest))) oldest = &slot;
  return oldest;
}

}  // namespace gpu_routing::pg::kept
