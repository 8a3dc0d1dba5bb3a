// Kept graphs, one session's side: the forms this backend has mapped (at most kMaxSessionGraphs),
// each with a view of its graph, the engines kept on it and its road index once mapped.
#pragma once

#include "kept/forms.hpp"

namespace gpu_routing {
struct Graph;
class EngineCache;
class Cch;
}  // namespace gpu_routing

namespace gpu_routing::pg::kept {

constexpr int kMaxSessionGraphs = 8;  // kept graphs one session keeps mapped

// A kept graph this session has mapped, with the engines kept on it.
struct SessionGraph {
  bool used;
  dsm_handle handle;
  dsm_segment* segment;
  Graph* view;
  EngineCache* engines;
  int form;
  int64 device_bytes;    // what this session reported into the form's device_bytes
  int64 edge_rows;       // of the form as mapped (the slot may hold another form later)
  double far_arc_share;  // the form's (SharedForm::far_arc_share)
  Size bytes;
  // The form's road index, mapped (null until a call needs it), and its segment's handle (an
  // index removed by gpu_graph_index(name, false) and made again is another segment).
  dsm_segment* index_segment;
  Cch* index;
  dsm_handle index_handle;
};
extern SessionGraph g_session[kMaxSessionGraphs];

// `locked`: the caller holds g_shared->lock exclusively.
void report_device_bytes(SessionGraph& entry, int64 bytes, bool locked = false);
void report_device_bytes_at_exit(SessionGraph& entry);
void release_session_graph(SessionGraph& entry, bool locked = false);
// Lets go of mappings whose form is gone or was replaced. Call without the lock.
void sweep_session_graphs();
SessionGraph* session_graph_for(dsm_handle handle);
// A slot for a new mapping: a free one, else the first one let go (reported under the lock when
// `locked`).
SessionGraph* take_session_slot(bool locked);
// Fills a slot take_session_slot gave with the mapping of form f: its segment (pinned) and the
// view and engines made on it.
void fill_session_slot(SessionGraph* slot, dsm_segment* segment, Graph* view, EngineCache* engines,
                       int f, int64 edge_rows, Size bytes, double far_arc_share);
// Lock held. Maps the ready form f (the lock keeps its segment from going meanwhile); null when
// the segment is gone.
SessionGraph* map_form(int f);

}  // namespace gpu_routing::pg::kept
