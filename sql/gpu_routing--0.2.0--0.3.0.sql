-- gpu_routing 0.2.0 -> 0.3.0: the GPU service, the road index.
\echo Use "ALTER EXTENSION gpu_routing UPDATE TO '0.3.0'" to load this file. \quit

-- gpu_routing_last_run() says, for a call the GPU service answered, how many requests shared its
-- launch and how long it waited for it.
DROP FUNCTION gpu_routing_last_run();
CREATE FUNCTION gpu_routing_last_run()
RETURNS TABLE (function text, device text, algorithm text, reason text, vertices bigint, edges bigint,
               sources bigint, rows bigint, rounds bigint, load_ms double precision,
               build_ms double precision, compute_ms double precision, transfer_ms double precision,
               emit_ms double precision, total_ms double precision, notes text, graph text,
               batch_size integer, wait_ms double precision)
AS 'MODULE_PATHNAME', 'gpu_routing_last_run'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_routing_last_run() IS
'The last gpu_routing call of this session: device, engine, size, where the milliseconds went, the kept graph that served it, and through the GPU service the requests that shared its launch and how long it waited.';

-- The road index of kept graphs: asked for per graph, recorded in the registry.
ALTER TABLE gpu_routing_graphs
    ADD COLUMN road_index boolean NOT NULL DEFAULT false;  -- gpu_graph_index: its forms carry a road index

CREATE FUNCTION gpu_graph_index(name text, enabled boolean DEFAULT true)
RETURNS text AS 'MODULE_PATHNAME', 'gpu_graph_index' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_graph_index(text, boolean) IS
'Gives a kept graph a road index (a customizable contraction hierarchy: routes in microseconds), made now when it can be, kept current after every committed change and after restarts; enabled => false removes it (owner or superuser).';
