-- The catalog of the gpu_routing extension in the current database, one line per fact, in an
-- order that does not depend on OIDs or on when objects were created: test/upgrade/run.sh diffs
-- this output between a database updated with ALTER EXTENSION gpu_routing UPDATE and a fresh
-- CREATE EXTENSION of the same version. Only the extension's own objects are listed (members of
-- the extension and the parts of its tables), never the user's objects that use them, and no data
-- (rows of the extension's tables, sequence values). Rows are ordered by the text of their names
-- (an object's OID, and so its place in a scan, differs when an update script re-creates it);
-- ORDER BY spells the expression out: `ORDER BY 2::text` would sort by a constant.
\pset footer off
\pset null '<null>'
-- The library defines the gpu_routing.* settings when it is loaded (at start when preloaded).
LOAD 'gpu_routing';

-- The extension itself, and pg_extension_config_dump's state: the tables (and sequences) whose
-- rows pg_dump keeps, with their conditions.
SELECT 'extension', e.extname, e.extversion, e.extrelocatable, e.extnamespace::regnamespace,
       e.extowner::regrole, obj_description(e.oid, 'pg_extension')
FROM pg_extension e WHERE e.extname = 'gpu_routing';

SELECT 'config dump', u.config::regclass, u.condition
FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(config, condition)
WHERE e.extname = 'gpu_routing'
ORDER BY u.config::regclass::text;

-- Every member of the extension (pg_depend deptype 'e').
WITH m AS (
  SELECT d.classid, d.objid, d.objsubid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'member', pg_describe_object(classid, objid, objsubid) FROM m ORDER BY 2;

-- What the members depend on, other than the extension (schema, owned-by, the event triggers'
-- function, ...).
WITH m AS (
  SELECT d.classid, d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'depends', pg_describe_object(d.classid, d.objid, d.objsubid), d.deptype,
       pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid)
FROM pg_depend d JOIN m ON d.classid = m.classid AND d.objid = m.objid
WHERE d.deptype <> 'e'
ORDER BY 2, 3, 4;

-- Functions: signature, result, behaviour, body (C symbol and library), owner, rights, comment.
WITH m AS (
  SELECT d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND d.classid = 'pg_proc'::regclass
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'function', p.oid::regprocedure, pg_get_function_identity_arguments(p.oid),
       pg_get_function_arguments(p.oid), pg_get_function_result(p.oid), p.prokind, l.lanname,
       p.provolatile, p.proisstrict, p.prosecdef, p.proleakproof, p.proparallel, p.proretset,
       p.procost, p.prorows, p.prosupport, p.prosrc, p.probin, p.proconfig, p.proowner::regrole,
       p.proacl, obj_description(p.oid, 'pg_proc')
FROM pg_proc p JOIN m ON m.objid = p.oid JOIN pg_language l ON l.oid = p.prolang
ORDER BY p.oid::regprocedure::text;

WITH m AS (
  SELECT d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND d.classid = 'pg_proc'::regclass
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'function definition', p.oid::regprocedure, pg_get_functiondef(p.oid)
FROM pg_proc p JOIN m ON m.objid = p.oid
WHERE p.prokind IN ('f', 'p', 'w')
ORDER BY p.oid::regprocedure::text;

-- Types: the extension's own, and the row types of its tables.
WITH m AS (
  SELECT d.classid, d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'type', t.oid::regtype, t.typtype, t.typcategory, t.typlen, t.typrelid::regclass,
       t.typelem::regtype, t.typarray::regtype, t.typowner::regrole, t.typacl,
       obj_description(t.oid, 'pg_type')
FROM pg_type t
WHERE t.oid IN (SELECT objid FROM m WHERE classid = 'pg_type'::regclass)
   OR t.typrelid IN (SELECT objid FROM m WHERE classid = 'pg_class'::regclass)
ORDER BY t.oid::regtype::text;

-- Relations (tables, sequences, views): kind, owner, rights, options, comment.
WITH m AS (
  SELECT d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND d.classid = 'pg_class'::regclass
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'relation', c.oid::regclass, c.relkind, c.relpersistence, c.relowner::regrole, c.relacl,
       c.reloptions, c.relrowsecurity, c.relforcerowsecurity, c.relreplident,
       obj_description(c.oid, 'pg_class')
FROM pg_class c JOIN m ON m.objid = c.oid
ORDER BY c.oid::regclass::text;

-- Columns, in their order (dropped columns skipped): type, null, default, identity, generated,
-- collation, rights, comment.
WITH m AS (
  SELECT d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND d.classid = 'pg_class'::regclass
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'column', c.oid::regclass,
       row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum), a.attname,
       format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid),
       a.attidentity, a.attgenerated, a.attcollation::regcollation, a.attstorage, a.attacl,
       col_description(c.oid, a.attnum)
FROM pg_class c JOIN m ON m.objid = c.oid
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
ORDER BY c.oid::regclass::text, 3;

-- Constraints of the extension's tables.
WITH m AS (
  SELECT d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND d.classid = 'pg_class'::regclass
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'constraint', co.conrelid::regclass, co.conname, co.contype, pg_get_constraintdef(co.oid),
       co.condeferrable, co.condeferred, co.convalidated, obj_description(co.oid, 'pg_constraint')
FROM pg_constraint co JOIN m ON m.objid = co.conrelid
ORDER BY co.conrelid::regclass::text, 3;

-- Indexes of the extension's tables.
WITH m AS (
  SELECT d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND d.classid = 'pg_class'::regclass
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'index', i.indrelid::regclass, ic.relname, pg_get_indexdef(i.indexrelid), i.indisunique,
       i.indisprimary, obj_description(i.indexrelid, 'pg_class')
FROM pg_index i JOIN m ON m.objid = i.indrelid JOIN pg_class ic ON ic.oid = i.indexrelid
ORDER BY i.indrelid::regclass::text, 3;

-- Triggers and row security policies on the extension's tables.
WITH m AS (
  SELECT d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND d.classid = 'pg_class'::regclass
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'trigger', t.tgrelid::regclass, t.tgname, pg_get_triggerdef(t.oid), t.tgenabled
FROM pg_trigger t JOIN m ON m.objid = t.tgrelid
WHERE NOT t.tgisinternal
ORDER BY t.tgrelid::regclass::text, 3;

WITH m AS (
  SELECT d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND d.classid = 'pg_class'::regclass
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'policy', p.polrelid::regclass, p.polname, p.polcmd, p.polpermissive, p.polroles::regrole[],
       pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid)
FROM pg_policy p JOIN m ON m.objid = p.polrelid
ORDER BY p.polrelid::regclass::text, 3;

-- Sequences (the identity column's): parameters, not the current value.
WITH m AS (
  SELECT d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND d.classid = 'pg_class'::regclass
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'sequence', s.seqrelid::regclass, s.seqtypid::regtype, s.seqstart, s.seqincrement, s.seqmax,
       s.seqmin, s.seqcache, s.seqcycle
FROM pg_sequence s JOIN m ON m.objid = s.seqrelid
ORDER BY s.seqrelid::regclass::text;

-- Event triggers (every one of the database: the test databases have no others).
SELECT 'event trigger', t.evtname, t.evtevent, t.evtfoid::regprocedure, t.evtenabled, t.evttags,
       t.evtowner::regrole, obj_description(t.oid, 'pg_event_trigger')
FROM pg_event_trigger t
ORDER BY 2;

-- Initial privileges recorded for the members (what pg_dump compares the current rights with).
WITH m AS (
  SELECT d.classid, d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'initial privileges', pg_describe_object(i.classoid, i.objoid, i.objsubid), i.privtype,
       i.initprivs
FROM pg_init_privs i JOIN m ON i.classoid = m.classid AND i.objoid = m.objid
ORDER BY 2;

-- Every comment on a member or a part of one (columns).
WITH m AS (
  SELECT d.classid, d.objid FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpu_routing'))
SELECT 'comment', pg_describe_object(c.classoid, c.objoid, c.objsubid), c.description
FROM pg_description c JOIN m ON c.classoid = m.classid AND c.objoid = m.objid
ORDER BY 2;

-- Settings the library defines (the same library serves both databases; listed so that a setting
-- an update script would create or change shows).
SELECT 'setting', s.name, s.vartype, s.unit, s.context, s.boot_val, s.min_val, s.max_val,
       s.enumvals, s.short_desc, s.extra_desc
FROM pg_settings s WHERE s.name LIKE 'gpu_routing.%'
ORDER BY 2;
