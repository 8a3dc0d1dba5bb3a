-- gpu_routing 0.3.0 -> 0.4.0: auto decides by estimated cost; gpu_routing_calibrate().
\echo Use "ALTER EXTENSION gpu_routing UPDATE TO '0.4.0'" to load this file. \quit

-- auto's speeds: measured on this machine, stored per server (the data directory), read by every
-- database's calls.
CREATE FUNCTION gpu_routing_calibrate()
RETURNS TABLE (speed text, value double precision, source text)
AS 'MODULE_PATHNAME', 'gpu_routing_calibrate'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_routing_calibrate() IS
'Measures the speeds auto estimates with (the CPU engines, and the GPU where one is usable: in this session, or through the GPU service) and stores them for the whole server; run it again when the hardware changes (superuser). Returns each speed and whether it was measured or is built-in.';
REVOKE ALL ON FUNCTION gpu_routing_calibrate() FROM PUBLIC;
