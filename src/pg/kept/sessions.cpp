// The forms one session has mapped (see sessions.hpp).
#include <cstring>

#include "road_index/cch.hpp"
#include "engine/engine.hpp"
#include "base/graph.hpp"
#include "guard.hpp"

#include "kept/sessions.hpp"

namespace gpu_routing::pg::kept {

SessionGraph g_session[kMaxSessionGraphs];

// `locked`: the caller holds g_shared->lock exclusively.
void report_device_bytes(SessionGraph& entry, int64 bytes, bool locked) {
  if (g_shared == nullptr || entry.form < 0 || bytes == entry.device_bytes) return;
  if (!locked) LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  SharedForm& form = g_shared->forms[entry.form];
  if (form.state == kFormReady && form.handle == entry.handle)
    form.device_bytes = std::max<int64>(0, form.device_bytes - entry.device_bytes + bytes);
  if (!locked) LWLockRelease(g_shared->lock);
  entry.device_bytes = bytes;
}

void report_device_bytes_at_exit(SessionGraph& entry) {
  report_device_bytes(entry, 0);
}

void release_session_graph(SessionGraph& entry, bool locked) {
  report_device_bytes(entry, 0, locked);
  Failure failure;
  guarded(&failure, [&] {
    delete entry.engines;  // before the index and the graph they use
    delete entry.index;
    delete entry.view;
  });
  entry.engines = nullptr;
  entry.index = nullptr;
  entry.view = nullptr;
  if (entry.index_segment != nullptr) dsm_detach(entry.index_segment);
  if (entry.segment != nullptr) dsm_detach(entry.segment);
  memset(&entry, 0, sizeof entry);
}

// Lets go of mappings whose form is gone or was replaced (the segment is freed once every
// session has let go). Call without the lock.
void sweep_session_graphs() {
  for (auto& entry : g_session) {
    if (!entry.used) continue;
    LWLockAcquire(g_shared->lock, LW_SHARED);
    const SharedForm& form = g_shared->forms[entry.form];
    const bool current =
        form.state == kFormReady && form.handle == entry.handle && form.database == MyDatabaseId;
    LWLockRelease(g_shared->lock);
    if (!current) release_session_graph(entry);
  }
}

SessionGraph* take_session_slot(bool locked) {
  // With every slot in use, the first one makes room.
  SessionGraph* slot = free_or_oldest(
      g_session, [](const SessionGraph& e) { return !e.used; },
      [](const SessionGraph&) { return true; },
      [](const SessionGraph&, const SessionGraph&) { return false; });
  if (slot->used) release_session_graph(*slot, locked);
  return slot;
}

SessionGraph* session_graph_for(dsm_handle handle) {
  for (auto& entry : g_session)
    if (entry.used && entry.handle == handle) return &entry;
  return nullptr;
}

// Maps a ready form (called with the lock held, so the segment cannot go away meanwhile).
SessionGraph* map_form(int f) {
  SharedForm& form = g_shared->forms[f];
  SessionGraph* entry = session_graph_for(form.handle);
  if (entry != nullptr) return entry;
  SessionGraph* slot = take_session_slot(true);
  dsm_segment* segment = dsm_attach(form.handle);
  if (segment == nullptr) return nullptr;
  dsm_pin_mapping(segment);
  Graph* view = nullptr;
  EngineCache* engines = nullptr;
  Failure failure;
  const void* address = dsm_segment_address(segment);
  const Size length = dsm_segment_map_length(segment);
  bool ok = guarded(&failure, [&] {
    view = new Graph(view_graph_image(address, length));
    engines = new EngineCache();
  });
  if (!ok) {
    dsm_detach(segment);
    raise_failure(&failure);
  }
  fill_session_slot(slot, segment, view, engines, f, form.edge_rows, form.bytes,
                    form.far_arc_share);
  return slot;
}

void fill_session_slot(SessionGraph* slot, dsm_segment* segment, Graph* view, EngineCache* engines,
                       int f, int64 edge_rows, Size bytes, double far_arc_share) {
  memset(slot, 0, sizeof *slot);
  slot->used = true;
  slot->handle = dsm_segment_handle(segment);
  slot->segment = segment;
  slot->view = view;
  slot->engines = engines;
  slot->form = f;
  slot->edge_rows = edge_rows;
  slot->far_arc_share = far_arc_share;
  slot->bytes = bytes;
}

}  // namespace gpu_routing::pg::kept
