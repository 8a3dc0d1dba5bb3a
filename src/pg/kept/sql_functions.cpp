// Kept graphs' SQL functions: gpu_graph_create, gpu_graph_refresh, gpu_graph_drop,
// gpu_graph_index, gpu_graphs() and the statement trigger gpu_routing_track_changes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "base/graph.hpp"
#include "progress.hpp"
#include "service.hpp"

#include "kept/kept_graphs.hpp"  // (core headers: before PostgreSQL's)
#include "kept/build.hpp"
#include "kept/change_log.hpp"
#include "kept/change_tracking.hpp"
#include "kept/extension_objects.hpp"
#include "kept/index_worker.hpp"
#include "kept/lifecycle.hpp"
#include "kept/query_reads.hpp"

extern "C" {
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "commands/trigger.h"
#include "utils/acl.h"
#include "utils/builtins.h"
}

extern "C" {
PG_FUNCTION_INFO_V1(gpu_graph_create);
PG_FUNCTION_INFO_V1(gpu_graph_refresh);
PG_FUNCTION_INFO_V1(gpu_graph_drop);
PG_FUNCTION_INFO_V1(gpu_graph_index);
PG_FUNCTION_INFO_V1(gpu_graphs);
PG_FUNCTION_INFO_V1(gpu_routing_track_changes);
}

namespace gpu_routing::pg::kept {
namespace {

// Builds the directed form of a (new or refreshed) registration now, when this transaction has
// written nothing yet: a build sees the transaction's own uncommitted writes, which must never be
// shared. Otherwise the first call after commit builds it. Returns a line for the caller.
std::string build_now(const Registration& reg, bool wrote_before, const char* function) {
  if (wrote_before)
    return "not built yet: this transaction wrote before; the first call after commit builds it";
  double build_ms = 0;
  SessionGraph* entry = acquire_form(reg, true, &build_ms, function);
  char text[256];
  snprintf(text, sizeof text, "%lld vertices, %lld arcs from %lld rows, %s, built in %.0f ms",
           static_cast<long long>(entry->view->vertex_count()),
           static_cast<long long>(entry->view->arc_count()),
           static_cast<long long>(entry->edge_rows), bytes_text(entry->bytes).c_str(), build_ms);
  return text;
}

// Whether `role` may see a graph's query text, tables and state: its owner (and roles with its
// privileges), members of pg_read_all_stats (as pg_stat_statements shows query texts), and roles
// that may SELECT every table and view its query reads.
bool graph_visible(Oid role, Oid owner, Datum tables) {
  if (superuser_arg(role) || has_privs_of_role(role, owner) ||
      has_privs_of_role(role, ROLE_PG_READ_ALL_STATS))
    return true;
  Datum* elements;
  bool* nulls;
  int count;
  deconstruct_array(DatumGetArrayTypeP(tables), OIDOID, sizeof(Oid), true, TYPALIGN_INT, &elements,
                    &nulls, &count);
  for (int i = 0; i < count; ++i) {
    bool missing = false;
    if (nulls[i] || pg_class_aclcheck_ext(DatumGetObjectId(elements[i]), role, ACL_SELECT,
                                          &missing) != ACLCHECK_OK)
      return false;
  }
  return true;
}

}  // namespace
}  // namespace gpu_routing::pg::kept

using namespace gpu_routing::pg;
using namespace gpu_routing::pg::kept;

// gpu_graph_create(name, edges_sql, refresh): checks as the caller, registers as the registry's
// owner, builds the directed form.
extern "C" Datum gpu_graph_create(PG_FUNCTION_ARGS) {
  const char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  const char* edges_sql = text_to_cstring(PG_GETARG_TEXT_PP(1));
  const char* refresh = text_to_cstring(PG_GETARG_TEXT_PP(2));
  require_shared_memory("gpu_graph_create");
  require_primary("gpu_graph_create");
  const bool wrote_before = TransactionIdIsValid(GetTopTransactionIdIfAny());
  if (!valid_graph_name(name))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("\"%s\" is not a valid kept graph name", name),
                    errhint("Names are identifiers: letters, digits and _, at most 63 bytes.")));
  if (strcmp(refresh, "auto") != 0 && strcmp(refresh, "manual") != 0)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("refresh of gpu_graph_create must be 'auto' or 'manual', not '%s'", refresh)));
  if (strncmp(edges_sql, kGraphPrefix, strlen(kGraphPrefix)) == 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("edges_sql of gpu_graph_create must be a query, not a graph name")));
  const bool manual = strcmp(refresh, "manual") == 0;
  const char* schema = extension_schema();
  Registration existing;
  read_registration(name, true, &existing);
  if (existing.found)
    ereport(ERROR,
            (errcode(ERRCODE_DUPLICATE_OBJECT), errmsg("kept graph \"%s\" already exists", name),
             errhint("gpu_graph_refresh('%s') rebuilds it; gpu_graph_drop('%s') drops it.", name,
                     name)));
  QueryReads reads;
  analyze_query(edges_sql, "gpu_graph_create", true, &reads);
  if (!manual && reads.untrackable[0] != '\0')
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("the changes edges_sql reads cannot be tracked: %s", reads.untrackable),
                    errhint("Register it with refresh => 'manual': then the owner calls "
                            "gpu_graph_refresh('%s') after every change.",
                            name)));
  // Triggers first: creating one locks its table against writers until this transaction ends, so
  // no change can slip between the build's snapshot and the trigger.
  if (!manual)
    for (int i = 0; i < reads.table_count; ++i)
      if (is_base_table(reads.relkinds[i])) ensure_trigger(reads.tables[i], schema);

  char* search_path = GetConfigOptionByName("search_path", nullptr, false);
  char sql[512];
  Oid types[7] = {TEXTOID, OIDOID, TEXTOID, TEXTOID, TEXTOID, REGCLASSARRAYOID, TEXTOID};
  Datum values[7] = {
      CStringGetTextDatum(name),        ObjectIdGetDatum(GetUserId()),
      CStringGetTextDatum(edges_sql),   CStringGetTextDatum(normalize_sql(edges_sql)),
      CStringGetTextDatum(search_path), tables_datum(reads),
      CStringGetTextDatum(refresh)};
  // owner is regrole: pass the oid through a cast.
  snprintf(sql, sizeof sql,
           "INSERT INTO %s.gpu_routing_graphs (name, owner, edges_sql, normalized_sql, "
           "search_path, tables, refresh) VALUES ($1, $2::regrole, $3, $4, $5, $6, $7)",
           schema);
  run_as_owner(sql, 7, types, values, nullptr, SPI_OK_INSERT);
  Registration reg;
  read_registration(name, true, &reg);
  remember_registration(reg.id, wrote_before);
  progress_begin("gpu_graph_create");
  std::string line = build_now(reg, wrote_before, "gpu_graph_create");
  progress_end();
  char* result = psprintf("kept graph %s: %s", name, line.c_str());
  PG_RETURN_TEXT_P(cstring_to_text(result));
}

extern "C" Datum gpu_graph_refresh(PG_FUNCTION_ARGS) {
  const char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  require_shared_memory("gpu_graph_refresh");
  require_primary("gpu_graph_refresh");
  const bool wrote_before = TransactionIdIsValid(GetTopTransactionIdIfAny());
  Registration reg = registration_to_manage(name, "gpu_graph_refresh");
  const char* schema = extension_schema();
  QueryReads reads;
  int level = push_search_path(reg.search_path);
  analyze_query(reg.edges_sql, "gpu_graph_refresh", true, &reads);
  pop_search_path(level);
  if (!reg.manual && reads.untrackable[0] != '\0')
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("the changes the query of \"%s\" reads cannot be tracked: %s", name,
                           reads.untrackable)));
  if (!reg.manual)
    for (int i = 0; i < reads.table_count; ++i)
      if (is_base_table(reads.relkinds[i])) ensure_trigger(reads.tables[i], schema);
  // Which forms were built: refresh rebuilds those (the directed one at least).
  bool had_undirected = false;
  LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
  for (int f = 0; f < kMaxForms; ++f) {
    const SharedForm& form = g_shared->forms[f];
    if (form.state == kFormReady && form.database == MyDatabaseId && form.graph_id == reg.id &&
        !form.directed)
      had_undirected = true;
  }
  free_forms_of(reg.id);
  LWLockRelease(g_shared->lock);
  char sql[512];
  snprintf(sql, sizeof sql,
           "UPDATE %s.gpu_routing_graphs SET tables = $2, unusable = NULL, "
           "generation = generation + 1 WHERE id = $1",
           schema);
  Oid types[2] = {INT8OID, REGCLASSARRAYOID};
  Datum values[2] = {Int64GetDatum(reg.id), tables_datum(reads)};
  run_as_owner(sql, 2, types, values, nullptr, SPI_OK_UPDATE);
  read_registration(name, true, &reg);
  remember_registration(reg.id, wrote_before);
  progress_begin("gpu_graph_refresh");
  std::string line = build_now(reg, wrote_before, "gpu_graph_refresh");
  if (had_undirected && !wrote_before) {
    double build_ms;
    acquire_form(reg, false, &build_ms, "gpu_graph_refresh");
    line += "; undirected form rebuilt";
  }
  progress_end();
  char* result = psprintf("kept graph %s: %s", name, line.c_str());
  PG_RETURN_TEXT_P(cstring_to_text(result));
}

extern "C" Datum gpu_graph_drop(PG_FUNCTION_ARGS) {
  const char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  require_primary("gpu_graph_drop");
  Registration reg = registration_to_manage(name, "gpu_graph_drop");
  const char* schema = extension_schema();
  char sql[256];
  snprintf(sql, sizeof sql, "DELETE FROM %s.gpu_routing_graphs WHERE id = $1", schema);
  Oid types[1] = {INT8OID};
  Datum values[1] = {Int64GetDatum(reg.id)};
  run_as_owner(sql, 1, types, values, nullptr, SPI_OK_DELETE);
  drop_unused_triggers(schema);
  if (g_shared != nullptr) {
    LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
    free_forms_of(reg.id);
    free_orders_of(reg.id);
    LWLockRelease(g_shared->lock);
  }
  PG_RETURN_VOID();
}

// gpu_graph_index(name, enabled): records in the registry whether the graph's forms carry a road
// index. Enabled, the index of the directed form is made now when this transaction has written
// nothing yet (as gpu_graph_create builds), else by the first call after commit; every later form
// (after a committed change, after a restart) gets it from its first call. Disabled, the graph's
// indexes and kept orders are freed.
extern "C" Datum gpu_graph_index(PG_FUNCTION_ARGS) {
  const char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  const bool enabled = PG_GETARG_BOOL(1);
  require_shared_memory("gpu_graph_index");
  require_primary("gpu_graph_index");
  const bool wrote_before = TransactionIdIsValid(GetTopTransactionIdIfAny());
  Registration reg = registration_to_manage(name, "gpu_graph_index");
  if (reg.unusable != nullptr)
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("kept graph \"%s\" is unusable: %s", name, reg.unusable),
             errhint("Run SELECT gpu_graph_refresh('%s') once its query works again.", name)));
  const char* schema = extension_schema();
  char sql[256];
  snprintf(sql, sizeof sql, "UPDATE %s.gpu_routing_graphs SET road_index = $2 WHERE id = $1",
           schema);
  Oid types[2] = {INT8OID, BOOLOID};
  Datum values[2] = {Int64GetDatum(reg.id), BoolGetDatum(enabled)};
  run_as_owner(sql, 2, types, values, nullptr, SPI_OK_UPDATE);
  if (!enabled) {
    LWLockAcquire(g_shared->lock, LW_EXCLUSIVE);
    free_indexes_of(reg.id);
    free_orders_of(reg.id);
    LWLockRelease(g_shared->lock);
    note_switched_off(reg.id);
    PG_RETURN_TEXT_P(cstring_to_text(psprintf("kept graph %s: road index off", name)));
  }
  reg.road_index = true;
  if (wrote_before)
    PG_RETURN_TEXT_P(cstring_to_text(
        psprintf("kept graph %s: road index on; this transaction wrote before, so the graph's "
                 "next call makes it",
                 name)));
  progress_begin("gpu_graph_index");
  double build_ms = 0;
  SessionGraph* entry = acquire_form(reg, true, &build_ms, "gpu_graph_index");
  KeptGraphUse use;
  prepare_road_index(reg, true, entry, true, &use);
  progress_end();
  // Not kept (it does not fit in gpu_routing.graph_memory, or no segment is left): the registry
  // must not ask for it either (this error rolls the switch-on back).
  if (use.road_index == nullptr && strncmp(use.index_how, "road index not kept", 19) == 0)
    ereport(ERROR,
            (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("kept graph %s: %s", name, use.index_how),
             errhint("Raise gpu_routing.graph_memory in postgresql.conf, or switch other "
                     "graphs' road indexes off.")));
  const char* how = use.index_how[0] != '\0'
                        ? use.index_how
                        : (use.road_index != nullptr ? "road index already made" : "road index on");
  PG_RETURN_TEXT_P(cstring_to_text(psprintf("kept graph %s: %s", name, how)));
}

// gpu_graphs(): the registrations joined with their built forms.
extern "C" Datum gpu_graphs(PG_FUNCTION_ARGS) {
  InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  const char* schema = extension_schema();
  if (schema == nullptr) return (Datum)0;
  MemoryContext caller = CurrentMemoryContext;
  const Oid caller_role = GetUserId();
  // Every registration, read as the registry's owner; what the caller may see of each is decided
  // below (graph_visible).
  const SavedUser saved = become_registry_owner();
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT name, owner, edges_sql, tables, refresh, id, generation, unusable, "
           "tables::oid[], %s FROM %s.gpu_routing_graphs ORDER BY name",
           road_index_column(), schema);
  SPI_execute(sql, true, 0);
  // Kept apart: reading the change log below runs SPI again.
  SPITupleTable* registrations = SPI_tuptable;
  const uint64 registration_count = SPI_processed;
  const bool in_recovery = RecoveryInProgress();
  for (uint64 r = 0; r < registration_count; ++r) {
    HeapTuple row = registrations->vals[r];
    TupleDesc desc = registrations->tupdesc;
    bool isnull;
    Datum values[16];
    bool nulls[16] = {false};
    for (int c = 0; c < 5; ++c) values[c] = SPI_getbinval(row, desc, c + 1, &nulls[c]);
    if (!graph_visible(caller_role, DatumGetObjectId(values[1]),
                       SPI_getbinval(row, desc, 9, &isnull))) {
      // The name and the owner alone: its query's text, tables and state are the business of
      // those who may read what it reads.
      MemoryContext spi = MemoryContextSwitchTo(caller);
      for (int c = 2; c < 15; ++c) nulls[c] = true;
      values[15] = CStringGetTextDatum(
          "hidden: you may not read every table its query reads (pg_read_all_stats may)");
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
      MemoryContextSwitchTo(spi);
      continue;
    }
    const int64 id = DatumGetInt64(SPI_getbinval(row, desc, 6, &isnull));
    const int64 generation = DatumGetInt64(SPI_getbinval(row, desc, 7, &isnull));
    bool no_reason;
    Datum unusable = SPI_getbinval(row, desc, 8, &no_reason);
    const bool index_asked = DatumGetBool(SPI_getbinval(row, desc, 10, &isnull)) && !isnull;
    std::string forms, state = "not built", note;
    int64 vertices = -1, edges = -1, calls = 0, host = 0, device = 0;
    TimestampTz built_at = 0, last_used = 0;
    double build_ms = -1;
    bool any = false;
    dsm_handle ready_handles[4];  // the ready forms' segments, for the GPU service's device copies
    int ready_count = 0;
    if (g_shared != nullptr) {
      // On a standby, forms are judged against the changes this statement's snapshot sees.
      CallView view;
      view.in_recovery = in_recovery;
      if (in_recovery) {
        bool no_tables;
        Datum tables = SPI_getbinval(row, desc, 9, &no_tables);
        if (!no_tables) {
          Datum* elements;
          bool* element_nulls;
          int count;
          deconstruct_array(DatumGetArrayTypeP(tables), OIDOID, sizeof(Oid), true, TYPALIGN_INT,
                            &elements, &element_nulls, &count);
          Oid relids[kMaxTablesPerGraph];
          count = std::min(count, kMaxTablesPerGraph);
          for (int i = 0; i < count; ++i) relids[i] = DatumGetObjectId(elements[i]);
          view.change_sum = change_log_sum(relids, count);
        }
      }
      LWLockAcquire(g_shared->lock, LW_SHARED);
      bool fresh = false, stale = false, building = false;
      for (int f = 0; f < kMaxForms; ++f) {
        const SharedForm& form = g_shared->forms[f];
        if (form.state == kFormFree || form.database != MyDatabaseId || form.graph_id != id ||
            form.generation != generation)
          continue;
        any = true;
        if (!forms.empty()) forms += ", ";
        forms += form.directed ? "directed" : "undirected";
        if (form.state == kFormBuilding) {
          building = true;
          continue;
        }
        (form_serves(form, view) ? fresh : stale) = true;
        if (vertices < 0 || form.directed) {
          vertices = form.vertices;
          edges = form.edge_rows;
        }
        host += static_cast<int64>(form.bytes + form.index_bytes);
        device += form.device_bytes;
        if (form.index_state == kIndexReady) {
          char line[200];
          snprintf(
              line, sizeof line,
              " with road index (%s; order %s, hierarchy %.0f ms, customization %.0f ms%s)",
              bytes_text(form.index_bytes).c_str(),
              form.index_order_ms > 0
                  ? (std::to_string(static_cast<long>(std::lround(form.index_order_ms))) + " ms")
                        .c_str()
                  : "kept",
              form.index_hierarchy_ms, form.index_customization_ms,
              form.index_on_gpu ? " on the GPU" : "");
          forms += line;
        } else if (form.index_state == kIndexBuilding) {
          forms += form.index_in_worker ? " (road index being made by a background worker)"
                                        : " (road index being made)";
        } else if (index_asked) {
          forms += " (road index asked for: made by the next call on the graph)";
        }
        if (ready_count < 4) ready_handles[ready_count++] = form.handle;
        calls += form.calls;
        if (form.built_at > built_at) {
          built_at = form.built_at;
          build_ms = form.build_ms;
        }
        last_used = std::max(last_used, form.last_used);
      }
      // Also counted against gpu_routing.graph_memory: forms of older generations (freed when
      // the current one is built) and the contraction order kept for re-making its road index.
      for (const auto& form : g_shared->forms)
        if (form.state == kFormReady && form.database == MyDatabaseId && form.graph_id == id &&
            form.generation != generation) {
          any = true;
          host += static_cast<int64>(form.bytes + form.index_bytes);
        }
      for (const auto& order : g_shared->orders) {
        if (!order.used || order.database != MyDatabaseId || order.graph_id != id) continue;
        any = true;
        host += static_cast<int64>(order.bytes);
        if (!forms.empty()) forms += "; ";
        forms += std::string("road index order kept") + (order.directed ? "" : " (undirected)") +
                 ", " + bytes_text(order.bytes);
      }
      LWLockRelease(g_shared->lock);
      // With the GPU service, the device copy is the service's (one for the server).
      for (int h = 0; h < ready_count; ++h) {
        const long long on_device =
            service_device_bytes(kept_image_segment_name(static_cast<unsigned>(ready_handles[h])));
        if (on_device > 0) device += on_device;
      }
      state = building ? "building" : fresh ? "fresh" : stale ? "stale" : "not built";
      if (stale && !fresh) note = "its tables changed: rebuilt on the next call";
      if (fresh && strcmp(TextDatumGetCString(values[4]), "manual") == 0)
        note = "refresh => manual: changes are seen after gpu_graph_refresh";
      if (state == "not built")
        note = "built on first use (after a restart, an eviction or a refresh)";
    } else {
      note = "kept graphs are off: gpu_routing is not in shared_preload_libraries";
    }
    if (!no_reason) {
      state = "unusable";
      note = TextDatumGetCString(unusable);
    }
    MemoryContext spi = MemoryContextSwitchTo(caller);
    values[5] = CStringGetTextDatum(state.c_str());
    nulls[6] = !any;
    values[6] = CStringGetTextDatum(forms.c_str());
    nulls[7] = vertices < 0;
    values[7] = Int64GetDatum(vertices);
    nulls[8] = edges < 0;
    values[8] = Int64GetDatum(edges);
    nulls[9] = !any;
    values[9] = Int64GetDatum(host);
    nulls[10] = !any;
    values[10] = Int64GetDatum(device);
    nulls[11] = built_at == 0;
    values[11] = TimestampTzGetDatum(built_at);
    nulls[12] = build_ms < 0;
    values[12] = Float8GetDatum(build_ms);
    values[13] = Int64GetDatum(calls);
    nulls[14] = last_used == 0;
    values[14] = TimestampTzGetDatum(last_used);
    nulls[15] = note.empty();
    values[15] = CStringGetTextDatum(note.c_str());
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    MemoryContextSwitchTo(spi);
  }
  SPI_finish();
  restore_user(saved);
  return (Datum)0;
}

// The statement trigger on kept graphs' tables: notes the table as changed by this transaction.
extern "C" Datum gpu_routing_track_changes(PG_FUNCTION_ARGS) {
  if (!CALLED_AS_TRIGGER(fcinfo))
    ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                    errmsg("gpu_routing_track_changes() is a trigger function")));
  TriggerData* data = reinterpret_cast<TriggerData*>(fcinfo->context);
  const Oid relid = RelationGetRelid(data->tg_relation);
  note_table_changed(relid);
  // For standbys, whose shared memory no commit here reaches (change_log.hpp).
  change_log_note(relid);
  return PointerGetDatum(nullptr);
}
