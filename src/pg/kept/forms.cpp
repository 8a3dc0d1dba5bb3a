// Kept graphs' shared state and its budget (see forms.hpp).
#include <cstdio>
#include <cstring>

#include "base/common.hpp"  // format_bytes (the core's headers come before PostgreSQL's)

#include "kept/forms.hpp"

extern "C" {
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
}

namespace gpu_routing::pg::kept {

SharedState* g_shared = nullptr;

namespace {

shmem_request_hook_type g_previous_shmem_request = nullptr;
shmem_startup_hook_type g_previous_shmem_startup = nullptr;

Size shared_size() {
  return MAXALIGN(sizeof(SharedState));
}

void shmem_request() {
  if (g_previous_shmem_request != nullptr) g_previous_shmem_request();
  RequestAddinShmemSpace(shared_size());
  RequestNamedLWLockTranche("gpu_routing", 1);
}

void shmem_startup() {
  if (g_previous_shmem_startup != nullptr) g_previous_shmem_startup();
  LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
  bool found = false;
  g_shared =
      static_cast<SharedState*>(ShmemInitStruct("gpu_routing kept graphs", shared_size(), &found));
  if (!found) {
    memset(g_shared, 0, sizeof(SharedState));
    g_shared->lock = &(GetNamedLWLockTranche("gpu_routing"))->lock;
    ConditionVariableInit(&g_shared->form_changed);
  }
  LWLockRelease(AddinShmemInitLock);
}

}  // namespace

Size graph_memory_bytes() {
  return static_cast<Size>(g_graph_memory_mb) * 1024 * 1024;
}

std::string bytes_text(Size bytes) {
  return format_bytes(bytes);
}

void forms_shmem_init() {
  g_previous_shmem_request = shmem_request_hook;
  shmem_request_hook = shmem_request;
  g_previous_shmem_startup = shmem_startup_hook;
  shmem_startup_hook = shmem_startup;
}

void copy_name(char* target, size_t size, const char* text) {
  snprintf(target, size, "%s", text);
}

TrackedTable* find_tracked(Oid relid, bool create) {
  for (int i = 0; i < g_shared->tracked_count; ++i)
    if (g_shared->tracked[i].database == MyDatabaseId && g_shared->tracked[i].relid == relid)
      return &g_shared->tracked[i];
  if (!create) return nullptr;
  if (g_shared->tracked_count == kMaxTrackedTables) {
    // Reuse entries no form refers to.
    int kept = 0;
    for (int i = 0; i < g_shared->tracked_count; ++i) {
      const TrackedTable& t = g_shared->tracked[i];
      bool referenced = false;
      for (int f = 0; f < kMaxForms && !referenced; ++f) {
        const SharedForm& form = g_shared->forms[f];
        if (form.state == kFormFree || form.database != t.database) continue;
        for (int k = 0; k < form.table_count; ++k)
          if (form.tables[k] == t.relid) referenced = true;
      }
      if (referenced || t.committing > 0) g_shared->tracked[kept++] = t;
    }
    g_shared->tracked_count = kept;
    if (kept == kMaxTrackedTables) return nullptr;
  }
  TrackedTable* t = &g_shared->tracked[g_shared->tracked_count++];
  t->database = MyDatabaseId;
  t->relid = relid;
  t->version = 1;
  t->committing = 0;
  return t;
}

int find_form(int64 id, int64 generation, bool directed) {
  for (int f = 0; f < kMaxForms; ++f) {
    const SharedForm& form = g_shared->forms[f];
    if (form.state != kFormFree && form.database == MyDatabaseId && form.graph_id == id &&
        form.generation == generation && form.directed == directed)
      return f;
  }
  return -1;
}

bool form_is_fresh(const SharedForm& form) {
  for (int k = 0; k < form.table_count; ++k) {
    TrackedTable* t = find_tracked(form.tables[k], false);
    if (t == nullptr || t->version != form.table_versions[k]) return false;
  }
  return true;
}

bool form_serves(const SharedForm& form, const CallView& view) {
  if (!form_is_fresh(form) || form.built_in_recovery != view.in_recovery) return false;
  return !view.in_recovery || form.table_count == 0 || form.change_sum >= view.change_sum;
}

void free_form(int f) {
  SharedForm& form = g_shared->forms[f];
  if (form.state == kFormReady && form.handle != DSM_HANDLE_INVALID)
    dsm_unpin_segment(form.handle);  // sessions still mapping it keep it until they let go
  if (form.index_state == kIndexReady && form.index_handle != DSM_HANDLE_INVALID)
    dsm_unpin_segment(form.index_handle);
  memset(&form, 0, sizeof form);
}

void free_order(SharedOrder& order) {
  if (order.used && order.handle != DSM_HANDLE_INVALID) dsm_unpin_segment(order.handle);
  memset(&order, 0, sizeof order);
}

// The graph's forms lose their road index (gpu_graph_index(name, false)). An index being made
// loses its claim too: its maker (a session or a background worker) then publishes nothing and
// keeps no order (make_claimed_index checks the claim at both steps), so a switched-off index
// never comes back by itself.
void free_indexes_of(int64 id) {
  for (auto& form : g_shared->forms) {
    if (form.state != kFormReady || form.database != MyDatabaseId || form.graph_id != id) continue;
    if (form.index_state == kIndexReady && form.index_handle != DSM_HANDLE_INVALID)
      dsm_unpin_segment(form.index_handle);  // sessions still mapping it keep it until they let go
    form.index_state = kIndexNone;
    form.index_builder_pid = 0;
    form.index_in_worker = false;
    form.index_handle = DSM_HANDLE_INVALID;
    form.index_bytes = 0;
  }
}

// The graph no longer wants an index (dropped): its orders go too.
void free_orders_of(int64 id) {
  for (auto& order : g_shared->orders)
    if (order.used && order.database == MyDatabaseId && order.graph_id == id) free_order(order);
}

SharedOrder* find_order(int64 id, bool directed) {
  for (auto& order : g_shared->orders)
    if (order.used && order.database == MyDatabaseId && order.graph_id == id &&
        order.directed == directed)
      return &order;
  return nullptr;
}

// Forms of a graph's older generations (from before a refresh or a schema change committed) serve
// no call whose registration is current: they go once the current generation is built.
void free_older_generations(int64 id, int64 generation) {
  for (int f = 0; f < kMaxForms; ++f) {
    const SharedForm& form = g_shared->forms[f];
    if (form.state == kFormReady && form.database == MyDatabaseId && form.graph_id == id &&
        form.generation < generation)
      free_form(f);
  }
}

// Frees every form of a graph id in this database (all generations).
void free_forms_of(int64 id) {
  for (int f = 0; f < kMaxForms; ++f) {
    SharedForm& form = g_shared->forms[f];
    if (form.state == kFormReady && form.database == MyDatabaseId && form.graph_id == id)
      free_form(f);
  }
}

Size used_bytes() {
  Size total = 0;
  for (int f = 0; f < kMaxForms; ++f)
    if (g_shared->forms[f].state != kFormFree)
      total += g_shared->forms[f].bytes + g_shared->forms[f].index_bytes;
  for (const auto& order : g_shared->orders)
    if (order.used) total += order.bytes;
  return total;
}

// Makes room for `bytes`: what was used longest ago goes first, whether a graph's built form
// (with its road index) or the contraction order kept for re-making an index (named in `evicted`,
// for a NOTICE after the lock is let go; both are made again when next needed). Only what is
// being built stays: the form `building` and forms other sessions are building or indexing. False,
// with the reason in `problem` naming what holds the memory, when the graph alone exceeds
// gpu_routing.graph_memory or cannot fit beside those. Called with the lock held exclusively;
// never raises.
bool make_room(const char* name, bool for_index, Size bytes, int building, char* problem,
               size_t size, char* evicted, size_t evicted_size) {
  const Size limit = graph_memory_bytes();
  evicted[0] = '\0';
  char what[128];
  snprintf(what, sizeof what, "%skept graph \"%s\"", for_index ? "the road index of " : "", name);
  if (bytes > limit) {
    snprintf(problem, size, "%s takes %s, more than gpu_routing.graph_memory (%s)", what,
             bytes_text(bytes).c_str(), bytes_text(limit).c_str());
    return false;
  }
  while (used_bytes() + bytes > limit) {
    int oldest_form = -1;
    for (int f = 0; f < kMaxForms; ++f) {
      const SharedForm& form = g_shared->forms[f];
      if (form.state != kFormReady || f == building || form.index_state == kIndexBuilding) continue;
      if (oldest_form < 0 || form.last_used < g_shared->forms[oldest_form].last_used)
        oldest_form = f;
    }
    SharedOrder* oldest_order = nullptr;
    for (auto& order : g_shared->orders)
      if (order.used && (oldest_order == nullptr || order.last_used < oldest_order->last_used))
        oldest_order = &order;
    if (oldest_form < 0 && oldest_order == nullptr) {
      // What is left is being built: name it.
      std::string holders;
      for (int f = 0; f < kMaxForms; ++f) {
        const SharedForm& form = g_shared->forms[f];
        if (form.state == kFormFree || form.bytes + form.index_bytes == 0) continue;
        if (!holders.empty()) holders += ", ";
        holders +=
            std::string("\"") + form.name + "\" " + bytes_text(form.bytes + form.index_bytes) +
            (form.state == kFormBuilding ? " (being built)" : " (its road index being made)");
      }
      snprintf(problem, size,
               "%s (%s) does not fit in gpu_routing.graph_memory (%s) beside what is being built: "
               "%s",
               what, bytes_text(bytes).c_str(), bytes_text(limit).c_str(),
               holders.empty() ? "nothing" : holders.c_str());
      return false;
    }
    const size_t used = strlen(evicted);
    if (oldest_order != nullptr &&
        (oldest_form < 0 || oldest_order->last_used < g_shared->forms[oldest_form].last_used)) {
      snprintf(evicted + used, evicted_size - used, "%sthe road index order of %s (%s)",
               used > 0 ? ", " : "", oldest_order->name, bytes_text(oldest_order->bytes).c_str());
      free_order(*oldest_order);
    } else {
      const SharedForm& form = g_shared->forms[oldest_form];
      snprintf(evicted + used, evicted_size - used, "%s%s (%s)", used > 0 ? ", " : "", form.name,
               bytes_text(form.bytes + form.index_bytes).c_str());
      free_form(oldest_form);
    }
  }
  return true;
}

}  // namespace gpu_routing::pg::kept
