// Kept graphs: how committed changes to their tables become visible to every session. A statement
// trigger on each table a graph reads notes the table in the writing transaction; at pre-commit
// the table is marked committing, and the commit callback raises its version in shared memory
// after the commit became visible (and the change log, change_log.hpp, tells hot standbys). A
// reader reads the versions before the snapshot it builds from: a form can be newer than its
// label, never older. Raises PostgreSQL errors (the trigger DDL).
#pragma once

#include "kept/forms.hpp"

#define GPU_ROUTING_TRACK_TRIGGER "gpu_routing_track_changes"

namespace gpu_routing::pg::kept {

constexpr const char* kTriggerName = GPU_ROUTING_TRACK_TRIGGER;

// The event trigger ignores our own CREATE TRIGGER / DROP TRIGGER while this is set.
extern bool g_own_ddl;

bool is_base_table(char relkind);
// Adds our statement trigger to a table the graph reads, if it has none.
void ensure_trigger(Oid relid, const char* schema);
// Drops our trigger from tables no remaining auto-refreshed graph reads.
void drop_unused_triggers(const char* schema);

// From the trigger: this transaction changed `relid`.
void note_table_changed(Oid relid);
// This transaction changed a tracked table (any, or one of `tables`).
bool tables_changed();
bool changed_in_this_transaction(const Oid* tables, int count);
// Lock held. A transaction that changed one of these tables is committing: its changes may be
// visible to the caller's snapshot before the versions say so.
bool change_being_committed(const Oid* tables, int count);

// The transaction's steps (lifecycle.cpp calls them): at pre-commit, mark the changed tables
// committing; at commit, raise their versions and release the marks; at abort, release them.
void mark_changes_committing();
void raise_versions_at_commit();
void release_commit_marks();
// The transaction ended: nothing changed any more.
void forget_changes();

}  // namespace gpu_routing::pg::kept
