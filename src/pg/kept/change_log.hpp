// The change log: how a hot standby learns that a kept graph's tables changed.
//
// On the primary, a committed change reaches every session's kept graphs through shared memory:
// the statement trigger notes the table and the commit callback raises its version. A standby
// only replays the primary's WAL: no trigger fires there, and its shared memory never hears of
// the change. So the trigger also writes the change into the database, where WAL carries it to
// every standby: the table gpu_routing_table_changes holds, per table and writing backend slot, a
// row whose `changes` counts the committed transactions of that slot that changed the table; per
// table they add up to the number of committed transactions that changed it. The changing
// transaction itself adds its one, so it becomes visible exactly when the change does, on the
// primary and on every standby. Summed under the snapshot a graph is read with, the rows say
// exactly which committed changes that snapshot sees: snapshots only ever see more committed
// transactions, so the sum only grows and an equal sum means the same changes. A form built on a
// standby is labelled with the sum under its build's snapshot; it serves a call whose sum is not
// larger.
#pragma once

#include "postgres_headers.hpp"

namespace gpu_routing::pg {

// From _PG_init: the transaction callbacks that forget what was logged.
void change_log_init();

// From the statement trigger: records that this transaction changed `relid`, once per table
// (again after the subtransaction that recorded it aborted). Nothing where the database's
// extension is older than 0.5.0 and has no change log.
void change_log_note(Oid relid);

// The committed changes to `tables` that the active snapshot sees (the sum of the log's rows),
// or -1 where the database's extension has no change log. Reads as the registry's owner.
int64 change_log_sum(const Oid* tables, int count);

}  // namespace gpu_routing::pg
