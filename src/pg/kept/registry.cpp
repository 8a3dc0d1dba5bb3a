// Kept graphs' registry (see registry.hpp).
#include "kept/registry.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "kept/extension_objects.hpp"

extern "C" {
#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/syscache.h"
#include "utils/plancache.h"
#include "utils/snapmgr.h"
}

namespace gpu_routing::pg::kept {

namespace {

// The registry lookups' plans, kept for the backend by query text (the text names the extension's
// schema, so an extension made again elsewhere gets plans of its own). Every call with a kept
// graph read its registration this way: planned each time, that was a fifth of a path query on
// Rome's road index (perf, 2-core machine: parse, analyse and plan of this SELECT). PostgreSQL's
// plan cache replans a kept plan when the registry table changes (its `*` then takes the columns
// an update added).
struct RegistryPlan {
  char query[512];
  SPIPlanPtr plan;
};
RegistryPlan g_registry_plans[4];

// The kept plan of `query`, prepared and kept on first use (inside SPI_connect).
SPIPlanPtr registry_plan(const char* query, Oid* types) {
  for (RegistryPlan& kept : g_registry_plans)
    if (kept.plan != nullptr && strcmp(kept.query, query) == 0) return kept.plan;
  SPIPlanPtr plan = SPI_prepare(query, 1, types);
  if (plan == nullptr)
    elog(ERROR, "preparing the gpu_routing_graphs lookup failed: %d", SPI_result);
  // Full (an installation changed several times in one session): the first slot's plan goes.
  RegistryPlan* slot = free_or_oldest(
      g_registry_plans, [](const RegistryPlan& p) { return p.plan == nullptr; },
      [](const RegistryPlan&) { return true; },
      [](const RegistryPlan&, const RegistryPlan&) { return false; });
  if (slot->plan != nullptr) SPI_freeplan(slot->plan);
  slot->plan = nullptr;
  if (SPI_keepplan(plan) != 0) elog(ERROR, "keeping the gpu_routing_graphs lookup failed");
  strlcpy(slot->query, query, sizeof slot->query);
  slot->plan = plan;
  return plan;
}

// Registrations read before, kept by the backend with the registry row they came from (its TID
// and xmin): a call validates one by fetching that row under a snapshot of its time, a few
// microseconds, where reading the registry through SPI cost tens of microseconds twice a call.
// Any change to a registration (gpu_graph_refresh, a schema change's new generation, unusable,
// road_index, gpu_graph_drop, a new row with the name) writes a new row version, whose old one
// the fetch then no longer sees: exact, on the primary and on a standby replaying it, as reading
// the registry is.
struct CachedRegistration {
  bool used;
  bool by_name;
  char* key;  // the name, or the normalized edges_sql
  Oid registry;
  ItemPointerData tid;
  TransactionId xmin;
  Registration reg;  // strings in g_registration_context
  uint64 used_at;
};
constexpr int kCachedRegistrations = 16;
CachedRegistration g_registrations[kCachedRegistrations];
uint64 g_registration_clock = 0;
MemoryContext g_registration_context = nullptr;

char* copy_text_into(MemoryContext context, const char* text) {
  return text == nullptr ? nullptr : MemoryContextStrdup(context, text);
}

// `from` with its strings copied into `context`.
Registration copy_registration(const Registration& from, MemoryContext context) {
  Registration to = from;
  to.name = copy_text_into(context, from.name);
  to.edges_sql = copy_text_into(context, from.edges_sql);
  to.search_path = copy_text_into(context, from.search_path);
  to.unusable = copy_text_into(context, from.unusable);
  return to;
}

void free_registration_strings(Registration& reg) {
  for (char* text : {reg.name, reg.edges_sql, reg.search_path, reg.unusable})
    if (text != nullptr) pfree(text);
}

// The row `cached` was read from is still what a snapshot taken now sees. As the registry's own
// read does (SPI, not read-only), the command counter advances first: a registration this
// transaction just wrote counts.
bool cached_row_current(const CachedRegistration& cached, Oid registry) {
  if (cached.registry != registry) return false;
  CommandCounterIncrement();
  Relation relation = table_open(registry, AccessShareLock);
  HeapTupleData tuple;
  tuple.t_self = cached.tid;
  Buffer buffer = InvalidBuffer;
  bool current = heap_fetch(relation, GetTransactionSnapshot(), &tuple, &buffer, false);
  if (current) {
    current = HeapTupleHeaderGetRawXmin(tuple.t_data) == cached.xmin;
    ReleaseBuffer(buffer);
  }
  table_close(relation, AccessShareLock);
  return current;
}

CachedRegistration* find_cached(const char* key, bool by_name) {
  for (CachedRegistration& cached : g_registrations)
    if (cached.used && cached.by_name == by_name && strcmp(cached.key, key) == 0) return &cached;
  return nullptr;
}

void keep_registration(const char* key, bool by_name, Oid registry, ItemPointerData tid,
                       TransactionId xmin, const Registration& reg) {
  if (g_registration_context == nullptr)
    g_registration_context =
        AllocSetContextCreate(TopMemoryContext, "gpu_routing registrations", ALLOCSET_SMALL_SIZES);
  CachedRegistration* slot = find_cached(key, by_name);
  if (slot == nullptr)
    slot = free_or_oldest(
        g_registrations, [](const CachedRegistration& c) { return !c.used; },
        [](const CachedRegistration&) { return true; },
        [](const CachedRegistration& a, const CachedRegistration& b) {
          return a.used_at < b.used_at;
        });
  if (slot->used) {
    pfree(slot->key);
    free_registration_strings(slot->reg);
  }
  slot->used = true;
  slot->by_name = by_name;
  slot->key = MemoryContextStrdup(g_registration_context, key);
  slot->registry = registry;
  slot->tid = tid;
  slot->xmin = xmin;
  slot->reg = copy_registration(reg, g_registration_context);
  slot->used_at = ++g_registration_clock;
}

// The registry's unique index on name, by registry (found once a backend).
Oid g_name_index_registry = InvalidOid;
Oid g_name_index = InvalidOid;

Oid name_index(Relation registry, AttrNumber name) {
  if (g_name_index_registry == RelationGetRelid(registry)) return g_name_index;
  Oid found = InvalidOid;
  List* indexes = RelationGetIndexList(registry);
  ListCell* cell;
  foreach (cell, indexes) {
    HeapTuple tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(cell)));
    if (!HeapTupleIsValid(tuple)) continue;
    const auto* index = reinterpret_cast<Form_pg_index>(GETSTRUCT(tuple));
    if (index->indisunique && index->indisvalid && index->indnkeyatts == 1 &&
        index->indkey.values[0] == name && heap_attisnull(tuple, Anum_pg_index_indexprs, nullptr) &&
        heap_attisnull(tuple, Anum_pg_index_indpred, nullptr))
      found = index->indexrelid;
    ReleaseSysCache(tuple);
    if (OidIsValid(found)) break;
  }
  list_free(indexes);
  g_name_index_registry = RelationGetRelid(registry);
  g_name_index = found;
  return found;
}

// The attribute number of the column named `attname` in `desc` (a registry row's or a query's
// over the registry), or InvalidAttrNumber.
AttrNumber column_number(TupleDesc desc, const char* attname) {
  for (int i = 0; i < desc->natts; ++i) {
    Form_pg_attribute attribute = TupleDescAttr(desc, i);
    if (!attribute->attisdropped && strcmp(NameStr(attribute->attname), attname) == 0)
      return static_cast<AttrNumber>(i + 1);
  }
  return InvalidAttrNumber;
}

// One registration from a registry row, its columns found by name in `desc` (the table's, or a
// query's selecting the table's columns); strings palloc'd in the current memory context. A
// registry before 0.3.0 has no road_index column: false.
void registration_from_row(HeapTuple row, TupleDesc desc, Registration* out) {
  bool isnull = false;
  auto value = [&](const char* attname) {
    const AttrNumber at = column_number(desc, attname);
    if (at == InvalidAttrNumber) {
      isnull = true;
      return Datum(0);
    }
    return heap_getattr(row, at, desc, &isnull);
  };
  auto text_value = [&](const char* attname) -> char* {
    const Datum datum = value(attname);
    return isnull ? nullptr : TextDatumGetCString(datum);
  };
  out->found = true;
  out->id = DatumGetInt64(value("id"));
  out->name = text_value("name");
  out->owner = DatumGetObjectId(value("owner"));  // regrole: an oid
  out->edges_sql = text_value("edges_sql");
  out->search_path = text_value("search_path");
  // regclass[]: oids, read as the array's own element type.
  ArrayType* tables = DatumGetArrayTypeP(value("tables"));
  Datum* elements;
  bool* nulls;
  int count;
  deconstruct_array(tables, ARR_ELEMTYPE(tables), sizeof(Oid), true, TYPALIGN_INT, &elements,
                    &nulls, &count);
  out->table_count = std::min(count, kMaxTablesPerGraph);
  for (int i = 0; i < out->table_count; ++i) out->tables[i] = DatumGetObjectId(elements[i]);
  const char* refresh = text_value("refresh");
  out->manual = refresh != nullptr && strcmp(refresh, "manual") == 0;
  out->generation = DatumGetInt64(value("generation"));
  out->unusable = text_value("unusable");
  const Datum road_index = value("road_index");
  out->road_index = !isnull && DatumGetBool(road_index);
}

// Reads the registration named `name` straight from the registry's unique index on name (no SQL
// to parse, analyse and plan: through SPI that was most of what a session's first route on a kept
// graph cost over its SELECT 1, a millisecond on the 2-core machine). Under a snapshot taken after
// the command counter advances, as the SPI read does. False where the registry has no such index
// (the caller reads it through SQL then); `tid` and `xmin` name the row read.
bool scan_registration(Oid registry, const char* name, MemoryContext into, Registration* out,
                       ItemPointerData* tid, TransactionId* xmin) {
  Relation relation = table_open(registry, AccessShareLock);
  TupleDesc desc = RelationGetDescr(relation);
  const AttrNumber name_column = column_number(desc, "name");
  const Oid index =
      name_column == InvalidAttrNumber ? InvalidOid : name_index(relation, name_column);
  if (!OidIsValid(index)) {
    table_close(relation, AccessShareLock);
    return false;
  }
  CommandCounterIncrement();
  Snapshot snapshot = RegisterSnapshot(GetTransactionSnapshot());
  PushActiveSnapshot(snapshot);  // detoasting a long query text reads under it
  ScanKeyData key;
  ScanKeyInit(&key, name_column, BTEqualStrategyNumber, F_TEXTEQ, CStringGetTextDatum(name));
  SysScanDesc scan = systable_beginscan(relation, index, true, snapshot, 1, &key);
  if (HeapTuple row = systable_getnext(scan); row != nullptr) {
    MemoryContext previous = MemoryContextSwitchTo(into);
    registration_from_row(row, desc, out);
    MemoryContextSwitchTo(previous);
    *tid = row->t_self;
    *xmin = HeapTupleHeaderGetRawXmin(row->t_data);
  }
  systable_endscan(scan);
  PopActiveSnapshot();
  UnregisterSnapshot(snapshot);
  table_close(relation, AccessShareLock);
  return true;
}

}  // namespace

// The registry is written on the primary only; a standby replays it (and builds its own forms).
void require_primary(const char* function) {
  if (!RecoveryInProgress()) return;
  ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                  errmsg("%s cannot run on a hot standby", function),
                  errdetail("Kept graphs are registered in the primary's tables, which a standby "
                            "only replays."),
                  errhint("Run it on the primary: the change reaches every standby through WAL, "
                          "and each standby builds its own copy of the graph on first use.")));
}

void require_shared_memory(const char* function) {
  if (g_shared != nullptr) return;
  ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                  errmsg("%s: kept graphs need gpu_routing in shared_preload_libraries", function),
                  errdetail("Kept graphs and their road indexes live in the server's shared "
                            "memory, which only a library loaded at server start can have."),
                  errhint("Add shared_preload_libraries = 'gpu_routing' to postgresql.conf "
                          "(keeping any libraries listed there) and restart the server; calls "
                          "with edges_sql work without it.")));
}

bool valid_graph_name(const char* name) {
  const size_t n = strlen(name);
  if (n == 0 || n > 63) return false;
  if (!(isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (size_t i = 1; i < n; ++i)
    if (!(isalnum(static_cast<unsigned char>(name[i])) || name[i] == '_')) return false;
  return true;
}

char* normalize_sql(const char* sql) {
  const size_t n = strlen(sql);
  char* out = static_cast<char*>(palloc(n + 1));
  size_t o = 0;
  bool space = false;
  for (size_t i = 0; i < n; ++i) {
    if (isspace(static_cast<unsigned char>(sql[i]))) {
      space = o > 0;
      continue;
    }
    if (space) out[o++] = ' ';
    space = false;
    out[o++] = sql[i];
  }
  out[o] = '\0';
  return out;
}

// Reads one registration by name (by_name) or by normalized edges_sql, as the registry's owner
// (other roles may not read the registry: query texts are private, 0.5.0). Palloc'd in the
// caller's context.
void read_registration(const char* key, bool by_name, Registration* out) {
  memset(out, 0, sizeof *out);
  // One lookup of the registry (its schema's name only where a query is written below): a call
  // reads its registration twice, and each read looked the registry up three times and quoted the
  // schema's name, 1.5% of a one-pair distance's backend time on the 2-core machine.
  Oid schema_oid = InvalidOid;
  const Oid registry = registry_relid(&schema_oid);
  if (!OidIsValid(schema_oid)) return;
  // A database still on gpu_routing 0.1.0 (the library is updated first, the SQL objects by
  // ALTER EXTENSION UPDATE) has no registry: no graph matches its queries, none can be named.
  if (!OidIsValid(registry)) {
    if (by_name)
      ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                      errmsg("kept graphs need gpu_routing 0.2.0 or later in this database"),
                      errhint("Update the extension: ALTER EXTENSION gpu_routing UPDATE.")));
    return;
  }
  MemoryContext caller = CurrentMemoryContext;
  if (CachedRegistration* cached = find_cached(key, by_name);
      cached != nullptr && cached_row_current(*cached, registry)) {
    cached->used_at = ++g_registration_clock;
    *out = copy_registration(cached->reg, caller);
    return;
  }
  if (by_name) {
    ItemPointerData tid;
    TransactionId xmin = InvalidTransactionId;
    if (scan_registration(registry, key, caller, out, &tid, &xmin)) {
      if (out->found) keep_registration(key, by_name, registry, tid, xmin, *out);
      return;
    }
  }
  const char* schema = extension_schema();
  if (schema == nullptr) return;
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  char query[512];
  snprintf(query, sizeof query, "SELECT *, ctid, xmin FROM %s.gpu_routing_graphs WHERE %s", schema,
           by_name ? "name = $1" : "md5(normalized_sql) = md5($1) AND normalized_sql = $1");
  Oid types[1] = {TEXTOID};
  Datum values[1] = {CStringGetTextDatum(key)};
  const SavedUser saved = become_registry_owner();
  // Not read-only: the command counter advances, so a registration this transaction just wrote
  // is seen.
  int status = SPI_execute_plan(registry_plan(query, types), values, nullptr, false, 2);
  restore_user(saved);
  if (status != SPI_OK_SELECT) elog(ERROR, "reading gpu_routing_graphs failed: %d", status);
  if (SPI_processed >= 1) {
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    MemoryContext spi = MemoryContextSwitchTo(caller);
    registration_from_row(row, desc, out);
    MemoryContextSwitchTo(spi);
    // Kept where the key names one registration (two rows with one normalized query: read each
    // time, as before).
    if (SPI_processed == 1) {
      bool isnull;
      const auto* tid = reinterpret_cast<ItemPointer>(
          DatumGetPointer(heap_getattr(row, column_number(desc, "ctid"), desc, &isnull)));
      const TransactionId xmin =
          DatumGetTransactionId(heap_getattr(row, column_number(desc, "xmin"), desc, &isnull));
      keep_registration(key, by_name, registry, *tid, xmin, *out);
    }
  }
  SPI_finish();
}

// The registration a graph-management call names, with the caller's rights to manage it.
Registration registration_to_manage(const char* name, const char* function) {
  Registration reg;
  read_registration(name, true, &reg);
  if (!reg.found)
    ereport(ERROR,
            (errcode(ERRCODE_UNDEFINED_OBJECT),
             errmsg("%s: there is no kept graph named \"%s\" in this database", function, name),
             errhint("SELECT name FROM gpu_graphs() lists them.")));
  if (reg.owner != GetUserId() && !superuser())
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("%s: only the owner of kept graph \"%s\" (%s) or a superuser may do this",
                    function, name, GetUserNameFromId(reg.owner, false))));
  return reg;
}

}  // namespace gpu_routing::pg::kept
