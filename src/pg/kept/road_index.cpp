// The road index of a kept graph's form (see road_index.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "road_index/cch.hpp"
#include "engine/engine.hpp"
#include "engine/gpu.hpp"
#include "base/graph.hpp"
#include "guard.hpp"
#include "progress.hpp"
#include "service.hpp"
#include "settings.hpp"

#include "kept/kept_graphs.hpp"  // (core headers: before PostgreSQL's)
#include "kept/lifecycle.hpp"
#include "kept/road_index.hpp"

extern "C" {
#include "utils/builtins.h"
}

namespace gpu_routing::pg::kept {

int g_test_index_pause = 0;

namespace {

// What a kept order depends on: the graph's vertices and arcs as vertex ids, independent of the
// order the rows came in (an UPDATE moves a row, and with it its arc's place in the CSR, without
// changing the topology). A sum of mixed (tail, head) pairs.
uint64 topology_key(const Graph& graph) {
  auto mix = [](uint64 x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
  };
  const CsrGraph& forward = graph.forward;
  uint64 key = mix(static_cast<uint64>(forward.vertex_count));
  for (VertexIndex u = 0; u < forward.vertex_count; ++u) {
    const uint64 tail = mix(static_cast<uint64>(graph.vertices.id(u)));
    key += mix(tail ^ 0x9e3779b97f4a7c15ULL);  // the vertex itself, arcs or none
    for (ArcIndex a = forward.begin(u); a < forward.end(u); ++a)
      key += mix(tail + mix(static_cast<uint64>(
                            graph.vertices.id(forward.heads[static_cast<std::size_t>(a)]))));
  }
  return key;
}

// Lets go of the session's mapping of its form's road index, and of the engine kept on it (which
// points into it).
void drop_index_mapping(SessionGraph* entry) {
  if (entry->index == nullptr) return;
  Failure ignored;
  guarded(&ignored, [&] {
    entry->engines->clear();
    delete entry->index;
  });
  entry->index = nullptr;
  dsm_detach(entry->index_segment);
  entry->index_segment = nullptr;
  entry->index_handle = DSM_HANDLE_INVALID;
}

// Makes the attached index image `segment` the session's index of `entry`'s form, in place of
// any earlier one. False, with the segment detached, when it is no image of this graph.
bool adopt_index(SessionGraph* entry, dsm_segment* segment, Failure* failure) {
  drop_index_mapping(entry);
  dsm_pin_mapping(segment);
  Cch* index = nullptr;
  const bool ok = guarded(failure, [&] {
    // The index segment is the one this form's claim named, made from this form's graph: its
    // counts are checked, not its whole topology again (a pass over every arc, 1.3 ms of each
    // session's first call on New York).
    index = new Cch(Cch::view_image(dsm_segment_address(segment), dsm_segment_map_length(segment),
                                    *entry->view, Cch::TopologyCheck::kCounts));
  });
  if (!ok) {
    dsm_detach(segment);
    return false;
  }
  entry->index_segment = segment;
  entry->index = index;
  entry->index_handle = dsm_segment_handle(segment);
  return true;
}

// Stores `order` (vertex indices by rank of `graph`) as the graph's kept order, as vertex ids.
// Called without the lock; a failure only loses the order (the next index orders again).
// The bytes keep_order takes for an order of `vertices` vertices and its hierarchy's topology.
Size order_bytes(std::size_t vertices, const Cch& hierarchy) {
  return std::max<Size>(1, MAXALIGN(vertices * sizeof(int64)) + hierarchy.topology_image_bytes());
}

// Whether this process still holds the claim on the index of `entry`'s form (a switch-off or a
// replaced form takes it away). Call with the lock held.
bool index_claim_held(const SessionGraph* entry) {
  const SharedForm& form = g_shared->forms[entry->form];
  return form.state == kFormReady && form.handle == entry->handle &&
         form.index_state == kIndexBuilding && form.index_builder_pid == MyProcPid;
}

// Keeps the order of the index this process is making for `entry`'s form, while it still holds
// the claim.
void keep_order(const Registration& reg, bool directed, const SessionGraph* entry,
                const std::vector<VertexIndex>& order, uint64 fingerprint, double order_ms,
                const Cch& hierarchy) {
  const Graph& graph = *entry->view;
  const Size topology_offset = MAXALIGN(order.size() * sizeof(int64));
  const Size topology_bytes = hierarchy.topology_image_bytes();
  const Size bytes = order_bytes(order.size(), hierarchy);
  dsm_segment* segment = dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS);
  if (segment == nullptr) return;
  auto* ids = static_cast<int64*>(dsm_segment_address(segment));
  for (std::size_t r = 0; r < order.size(); ++r) ids[r] = graph.vertices.id(order[r]);
  hierarchy.write_topology_image(static_cast<char*>(dsm_segment_address(segment)) +
                                 topology_offset);
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  if (!index_claim_held(entry)) {  // switched off (or replaced) meanwhile: nothing is kept
    LWLockRelease(g_shared->lock);
    dsm_detach(segment);
    return;
  }
  // The graph's earlier order, else a free slot, else the oldest order goes.
  SharedOrder* slot = find_order(reg.id, directed);
  if (slot == nullptr)
    slot = free_or_oldest(
        g_shared->orders, [](const SharedOrder& o) { return !o.used; },
        [](const SharedOrder&) { return true; },
        [](const SharedOrder& a, const SharedOrder& b) { return a.made_at < b.made_at; });
  free_order(*slot);
  dsm_pin_segment(segment);
  slot->used = true;
  copy_name(slot->name, sizeof slot->name, reg.name);
  slot->database = MyDatabaseId;
  slot->graph_id = reg.id;
  slot->directed = directed;
  slot->fingerprint = fingerprint;
  slot->vertices = static_cast<int64>(order.size());
  slot->handle = dsm_segment_handle(segment);
  slot->bytes = bytes;
  slot->topology_offset = topology_offset;
  slot->topology_bytes = topology_bytes;
  slot->order_ms = order_ms;
  slot->made_at = GetCurrentTimestamp();
  slot->last_used = slot->made_at;
  LWLockRelease(g_shared->lock);
  dsm_detach(segment);
}

// This process's GPU customizer, kept with the hierarchy it was made for (its topology and
// order, hierarchy_key), so that the index of the graph's next form (after a committed cost
// change: same topology, kept order) is customized on the device again without laying out the
// topology anew (New York, H100: 7.2 ms against 14.5 on 16 cores; a fresh customizer 42 ms).
// It holds about 60 bytes of device memory a hierarchy arc until the process ends or another
// hierarchy replaces it. Never destroyed at exit (the CUDA runtime may be torn down before static
// destructors run; the process's end frees the device memory).
gpu::CchCustomizer* g_customizer = nullptr;
uint64 g_customizer_key = 0;

// The hierarchy's identity for the customizer: the graph's topology and the order (the same
// topology and order make the same hierarchy; the customizer itself checks only sizes).
uint64 hierarchy_key(const Cch& index, uint64 topology) {
  uint64 key = topology ^ 0x6a09e667f3bcc909ULL;
  const auto at_rank = index.vertex_at_rank();
  for (std::size_t r = 0; r < at_rank.size(); ++r)
    key = (key ^ static_cast<uint64>(static_cast<uint32>(at_rank[r]))) * 0x100000001b3ULL;
  return key;
}

// Customizes `index` for `graph` where `choice` says; true when on the GPU. `note` says why not
// where the GPU was asked for and the GPU service owns it. Plain C++: throws RoutingError.
bool customize_index(Cch& index, const Graph& graph, uint64 topology,
                     const CustomizationChoice& choice, std::string* note) {
  const CancelToken cancel(cancel_requested);
  bool on_gpu = false;
  // The customizer kept by this session serves one hierarchy: compared only where one may be
  // used (a pass over the ranks).
  const bool customizer_may_serve = choice.setting != IndexCustomization::kCpu;
  const uint64 key = customizer_may_serve ? hierarchy_key(index, topology) : 0;
  if (choice.setting == IndexCustomization::kGpu) {
    if (choice.device_cpu)
      throw RoutingError(
          ErrorKind::kInvalidParameter,
          "gpu_routing.index_customization = gpu contradicts gpu_routing.device = cpu",
          "SET gpu_routing.index_customization = auto (or cpu), or gpu_routing.device = auto.");
    // With the GPU service configured the GPUs are the service's: this process opens no CUDA
    // context, and customizes on the CPU where the service has a GPU.
    ServiceUse service;
    resolve_service(false, true, &service);
    const gpu::Availability& gpus = service.configured ? service.gpus : gpu::availability();
    if (!gpus.usable)
      throw RoutingError(
          ErrorKind::kNoDevice,
          "gpu_routing.index_customization = gpu, but no GPU is usable: " + gpus.reason,
          "SET gpu_routing.index_customization = auto to customize on the CPU.");
    if (service.configured)
      *note = "customized on the CPU: the GPU service owns the GPUs";
    else
      on_gpu = true;
  } else if (choice.setting == IndexCustomization::kAuto) {
    on_gpu = !choice.device_cpu && g_customizer != nullptr && g_customizer_key == key &&
             !service_configured();
  }
  if (!on_gpu) {
    index.customize(graph, cancel, choice.threads);
    return false;
  }
  auto forget = [] {
    delete g_customizer;
    g_customizer = nullptr;
    g_customizer_key = 0;
  };
  bool fresh = false;
  if (g_customizer == nullptr || g_customizer_key != key) {
    forget();  // one kept: its device memory goes first
    g_customizer = new gpu::CchCustomizer(index, graph);
    g_customizer_key = key;
    fresh = true;
  }
  try {
    // The same hierarchy; the graph's arcs may have come in another order (an UPDATE moves rows).
    if (!fresh) g_customizer->follow_arc_order(index, graph);
    g_customizer->customize(index, graph, cancel);
  } catch (...) {
    forget();  // a customizer that failed midway (cancel, device error) is not trusted again
    throw;
  }
  return true;
}

}  // namespace

CustomizationChoice customization_choice() {
  const Settings settings = current_settings();
  CustomizationChoice choice;
  choice.setting = settings.index_customization;
  choice.device_cpu = settings.device == DeviceSetting::kCpu;
  choice.threads = settings.threads;
  choice.test_pause_key = g_test_index_pause;
  return choice;
}

OrderPlace order_place(const SharedOrder* order) {
  OrderPlace place;
  if (order == nullptr) return place;
  place.handle = order->handle;
  place.fingerprint = order->fingerprint;
  place.vertices = order->vertices;
  place.topology_offset = order->topology_offset;
  place.topology_bytes = order->topology_bytes;
  return place;
}

// Claims the making of form f's index for this process (called with the lock held).
void claim_index(SharedForm& form, int f, bool in_worker) {
  form.index_state = kIndexBuilding;
  form.index_builder_pid = MyProcPid;
  form.index_in_worker = in_worker;
  g_building_index = f;
  g_building_index_form = form.handle;
}

// Maps the ready index of `entry`'s form (called with the lock held, so it cannot go away),
// unless the session has it mapped already. A newer index of the same form (removed and made
// again) replaces the old mapping; an image that does not fit its graph is not used (the call
// uses the search engines).
void map_index(SessionGraph* entry, const SharedForm& form) {
  if (entry->index != nullptr && entry->index_handle == form.index_handle) return;
  drop_index_mapping(entry);
  dsm_segment* segment = dsm_attach(form.index_handle);
  if (segment == nullptr) return;
  Failure failure;
  adopt_index(entry, segment, &failure);
}

void make_claimed_index(const Registration& reg, bool directed, SessionGraph* entry,
                        const OrderPlace& order, const char* maker,
                        const CustomizationChoice& choice, KeptGraphUse* use) {
  SharedForm& form = g_shared->forms[entry->form];
  const dsm_handle order_handle = order.handle;
  const uint64 order_fingerprint = order.fingerprint;
  const int64 order_vertices = order.vertices;
  const Size topology_offset = order.topology_offset;
  const Size topology_bytes = order.topology_bytes;

  progress_set_phase(CallPhase::kBuilding);
  const Graph& graph = *entry->view;
  std::unique_ptr<Cch> built;
  std::vector<VertexIndex> new_order;
  uint64 fingerprint = 0;
  double order_ms = 0;
  bool topology_copied = false;
  bool on_gpu = false;
  std::string customization_note;
  Failure failure;
  bool ok = guarded(&failure, [&] {
    fingerprint = topology_key(graph);
    std::vector<VertexIndex> ranked;
    // The kept order, where it was made for this very topology; with it the kept hierarchy, whose
    // topology image names vertex indices, valid while the vertex ids map to the same indices
    // (the same ids in the same CSR: the fingerprint covers it).
    if (order_handle != DSM_HANDLE_INVALID && order_fingerprint == fingerprint &&
        order_vertices == graph.vertex_count()) {
      // Attaching may fail if the order was replaced meanwhile: then order again.
      if (dsm_segment* segment = dsm_attach(order_handle); segment != nullptr) {
        const auto* ids = static_cast<const int64*>(dsm_segment_address(segment));
        bool same_indices = true;
        ranked.reserve(static_cast<std::size_t>(order_vertices));
        for (int64 r = 0; r < order_vertices; ++r) {
          const VertexIndex v = graph.vertices.find(ids[r]);
          if (v == kNoVertex) break;
          ranked.push_back(v);
        }
        if (ranked.size() != static_cast<std::size_t>(order_vertices)) ranked.clear();
        if (!ranked.empty() && topology_bytes > 0) {
          try {
            auto copied = std::make_unique<Cch>(Cch::from_topology_image(
                static_cast<const char*>(dsm_segment_address(segment)) + topology_offset,
                topology_bytes, graph));
            // The image's ranks must be the order's (vertex indices of this graph).
            const auto at_rank = copied->vertex_at_rank();
            for (std::size_t r = 0; r < ranked.size() && same_indices; ++r)
              same_indices = at_rank[r] == ranked[r];
            if (same_indices) built = std::move(copied);
          } catch (const RoutingError&) {
            // Another topology after all: the hierarchy is built from the order below.
          }
        }
        dsm_detach(segment);
      }
    }
    if (ranked.empty()) {
      Stopwatch watch;
      ranked = cch_order(graph, nullptr, nullptr, CancelToken(cancel_requested), choice.threads);
      order_ms = std::max(watch.elapsed_ms(), 0.001);
      new_order = ranked;
    }
    if (built == nullptr)
      built = std::make_unique<Cch>(graph, std::move(ranked), CancelToken(cancel_requested));
    else
      topology_copied = true;
    built->set_huge_pages(true);  // customized once, written into the DSM image, then freed
    on_gpu = customize_index(*built, graph, fingerprint, choice, &customization_note);
  });
  if (!ok) raise_failure(&failure);  // the abort callback gives the claim back

  if (choice.test_pause_key != 0)
    DirectFunctionCall1(pg_advisory_xact_lock_shared_int8,
                        Int64GetDatum(static_cast<int64>(choice.test_pause_key)));
  // The index and, where this call ordered the graph anew, the order kept beside it.
  const Size bytes = built->image_bytes();
  const Size new_order_bytes = new_order.empty() ? 0 : order_bytes(new_order.size(), *built);
  char problem[320] = "", evicted[512] = "";
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  const bool claimed = index_claim_held(entry);
  bool fits = claimed && make_room(reg.name, true, bytes + new_order_bytes, entry->form, problem,
                                   sizeof problem, evicted, sizeof evicted);
  if (fits) form.index_bytes = bytes;  // counted while the image is written
  if (claimed && new_order.empty() && order_handle != DSM_HANDLE_INVALID)
    if (SharedOrder* used = find_order(reg.id, directed);
        used != nullptr && used->handle == order_handle)
      used->last_used = GetCurrentTimestamp();
  LWLockRelease(g_shared->lock);
  if (evicted[0] != '\0')
    ereport(NOTICE, (errmsg("evicted from memory to make room for the road index of kept graph "
                            "\"%s\": %s; they are rebuilt when next used",
                            reg.name, evicted)));
  if (!claimed) {  // switched off, or the form replaced, while it was being made
    g_building_index = -1;
    g_building_index_form = DSM_HANDLE_INVALID;
    snprintf(use->index_how, sizeof use->index_how,
             "road index not kept: switched off or replaced while it was being made");
    return;
  }
  if (fits && !new_order.empty()) {
    ok = guarded(&failure, [&] {
      keep_order(reg, directed, entry, new_order, fingerprint, order_ms, *built);
    });
    if (!ok) raise_failure(&failure);
  }
  dsm_segment* segment = fits ? dsm_create(bytes, DSM_CREATE_NULL_IF_MAXSEGMENTS) : nullptr;
  if (segment == nullptr) {
    abandon_index_build();
    snprintf(use->index_how, sizeof use->index_how, "road index not kept: %s",
             fits ? "no dynamic shared memory segment left" : problem);
    return;
  }
  ok = guarded(&failure, [&] { built->write_image(dsm_segment_address(segment)); });
  if (!ok) {
    dsm_detach(segment);
    raise_failure(&failure);
  }
  const double hierarchy_ms = built->build_ms(), customization_ms = built->customization_ms();
  ok = guarded(&failure, [&] { built.reset(); });

  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  const bool still_ours = form.state == kFormReady && form.handle == entry->handle &&
                          form.index_state == kIndexBuilding && form.index_builder_pid == MyProcPid;
  if (still_ours) {
    dsm_pin_segment(segment);
    form.index_state = kIndexReady;
    form.index_builder_pid = 0;
    form.index_handle = dsm_segment_handle(segment);
    form.index_bytes = bytes;
    form.index_order_ms = order_ms;
    form.index_hierarchy_ms = hierarchy_ms;
    form.index_customization_ms = customization_ms;
    form.index_on_gpu = on_gpu;
  }
  LWLockRelease(g_shared->lock);
  g_building_index = -1;
  g_building_index_form = DSM_HANDLE_INVALID;
  if (!still_ours) {  // the form was replaced or evicted meanwhile
    dsm_detach(segment);
    return;
  }
  if (!adopt_index(entry, segment, &failure)) raise_failure(&failure);
  use->road_index = entry->index;
  use->index_handle = static_cast<unsigned>(entry->index_handle);
  use->index_bytes = bytes;
  const std::string where_text =
      on_gpu ? " on the GPU"
             : (customization_note.empty() ? std::string() : " (" + customization_note + ")");
  const char* where = where_text.c_str();
  if (order_ms > 0)
    snprintf(use->index_how, sizeof use->index_how,
             "road index made by %s: order %.0f ms, hierarchy %.0f ms, customization "
             "%.0f ms%s, %s",
             maker, order_ms, hierarchy_ms, customization_ms, where, bytes_text(bytes).c_str());
  else
    snprintf(use->index_how, sizeof use->index_how,
             "road index made by %s with the kept order: hierarchy %s %.0f ms, "
             "customization %.0f ms%s, %s",
             maker, topology_copied ? "copied from the kept one in" : "built in", hierarchy_ms,
             customization_ms, where, bytes_text(bytes).c_str());
}

}  // namespace gpu_routing::pg::kept
