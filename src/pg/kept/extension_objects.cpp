// The extension's objects in the current database (see extension_objects.hpp).
#include "kept/extension_objects.hpp"

extern "C" {
#include "access/genam.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/syscache.h"
}

namespace gpu_routing::pg {

namespace {

// The namespace of an extension (PostgreSQL 15 keeps its own get_extension_schema static).
Oid get_extension_schema(Oid extension) {
  Relation rel = table_open(ExtensionRelationId, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
              ObjectIdGetDatum(extension));
  SysScanDesc scan = systable_beginscan(rel, ExtensionOidIndexId, true, nullptr, 1, &key);
  HeapTuple tuple = systable_getnext(scan);
  Oid schema = HeapTupleIsValid(tuple)
                   ? reinterpret_cast<Form_pg_extension>(GETSTRUCT(tuple))->extnamespace
                   : InvalidOid;
  systable_endscan(scan);
  table_close(rel, AccessShareLock);
  return schema;
}

// The extension's schema, remembered by the backend: pg_extension has no syscache, and looking
// it up (an index scan for the name, another for the schema, each opening pg_extension) three
// times a call was 4% of a backend's time under pgbench (paths on a kept graph at 0.5 ms a
// call). The registry table, found through the syscache in the remembered schema, vouches for
// it; where it is not there (ALTER EXTENSION SET SCHEMA, the extension dropped or made again, a
// database still on 0.1.0) the schema is looked up again.
Oid g_extension_schema = InvalidOid;

}  // namespace

Oid registry_relid(Oid* schema) {
  if (OidIsValid(g_extension_schema)) {
    const Oid relid = get_relname_relid("gpu_routing_graphs", g_extension_schema);
    if (OidIsValid(relid)) {
      if (schema != nullptr) *schema = g_extension_schema;
      return relid;
    }
  }
  const Oid extension = get_extension_oid("gpu_routing", true);
  g_extension_schema = OidIsValid(extension) ? get_extension_schema(extension) : InvalidOid;
  if (schema != nullptr) *schema = g_extension_schema;
  return OidIsValid(g_extension_schema)
             ? get_relname_relid("gpu_routing_graphs", g_extension_schema)
             : InvalidOid;
}

const char* extension_schema() {
  Oid schema = InvalidOid;
  registry_relid(&schema);
  if (!OidIsValid(schema)) return nullptr;
  char* name = get_namespace_name(schema);
  return name == nullptr ? nullptr : quote_identifier(name);
}

// A database still on 0.2.0 has no road_index column (ALTER EXTENSION UPDATE adds it).
const char* road_index_column() {
  const Oid registry = registry_relid();
  return get_attnum(registry, "road_index") != InvalidAttrNumber ? "road_index" : "false";
}

Oid registry_owner() {
  const Oid relid = registry_relid();
  if (!OidIsValid(relid))
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE), errmsg("gpu_routing_graphs is missing"),
                    errhint("Update the extension: ALTER EXTENSION gpu_routing UPDATE.")));
  HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
  if (!HeapTupleIsValid(tuple)) elog(ERROR, "cache lookup failed for relation %u", relid);
  Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
  ReleaseSysCache(tuple);
  return owner;
}

SavedUser become_registry_owner() {
  const Oid owner = registry_owner();
  SavedUser saved;
  GetUserIdAndSecContext(&saved.user, &saved.context);
  SetUserIdAndSecContext(owner, saved.context | SECURITY_LOCAL_USERID_CHANGE);
  return saved;
}

void restore_user(const SavedUser& saved) {
  SetUserIdAndSecContext(saved.user, saved.context);
}

void run_as_owner(const char* sql, int nargs, Oid* types, Datum* values, const char* nulls,
                  int expected) {
  const SavedUser saved = become_registry_owner();
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  int status = SPI_execute_with_args(sql, nargs, types, values, nulls, false, 0);
  if (status != expected) elog(ERROR, "gpu_routing: \"%s\" failed: %d", sql, status);
  SPI_finish();
  restore_user(saved);
}

Oid change_log_relid() {
  Oid schema = InvalidOid;
  if (!OidIsValid(registry_relid(&schema))) return InvalidOid;
  return get_relname_relid("gpu_routing_table_changes", schema);
}

}  // namespace gpu_routing::pg
