// The extension's own objects in the current database: its schema, the registry of kept graphs
// and its owner, the change log that standbys read. Looked up through the syscache and remembered
// by the backend; every function here may raise PostgreSQL errors.
#pragma once

#include "postgres_headers.hpp"

namespace gpu_routing::pg {

// The registry table's oid, or InvalidOid where the extension or its registry is missing; the
// schema it was looked for in goes to *schema where asked (InvalidOid without the extension).
Oid registry_relid(Oid* schema = nullptr);
// The schema of the extension's objects, quoted; null when the extension is not in this database.
const char* extension_schema();
// The registry's road_index column for a SELECT list ("false" on a database still on 0.2.0).
const char* road_index_column();
// The registry's owner: the extension's functions write its tables as this role.
Oid registry_owner();
// The change log's oid (gpu_routing_table_changes, 0.5.0), or InvalidOid where this database's
// extension is older.
Oid change_log_relid();

// Runs `sql` with arguments as the registry's owner (the caller's rights were checked before);
// an SPI status other than `expected` is an error.
void run_as_owner(const char* sql, int nargs, Oid* types, Datum* values, const char* nulls,
                  int expected);

// The current role becomes the registry's owner until restore_user (or the transaction's abort,
// which restores it anyway).
struct SavedUser {
  Oid user;
  int context;
};
SavedUser become_registry_owner();
void restore_user(const SavedUser& saved);

}  // namespace gpu_routing::pg
