// gpu_routing client: shortest paths, cost matrices and reachable sets from a PostgreSQL database
// with the gpu_routing extension, for C++17 applications (over libpqxx).
//
//   gpu_routing::Router router{"host=db dbname=roads",
//                              gpu_routing::EdgeSource::from_table({"ny_edges"})};
//   if (auto route = router.path(1, 5000)) std::cout << route->cost << "\n";
//
// With a kept graph of the database (gpu_graph_create), each call skips reading and building it:
//   gpu_routing::Router kept{"host=db dbname=roads", gpu_routing::EdgeSource::from_graph("ny")};
//
// One Router holds one connection and is not thread-safe: give each thread its own. Every call is
// read-only; a connection that breaks between calls is reopened once and the call retried. Errors
// are exceptions derived from gpu_routing::Error carrying the server's message and SQLSTATE.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gpu_routing {

using VertexId = std::int64_t;
using EdgeId = std::int64_t;

// The cost of a pair with no path between them in a CostMatrix.
inline constexpr double kUnreachable = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------------
// Errors.

// Every failure of the client. what() is one line: the server's primary message (or libpq's).
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, std::string sqlstate = {}, std::string detail = {},
        std::string hint = {});
  // Five-character SQLSTATE from the server ("42P01", "57014", ...); empty when the failure was
  // not reported by a server (no connection, bad arguments).
  const std::string& sqlstate() const noexcept { return sqlstate_; }
  const std::string& detail() const noexcept { return detail_; }
  const std::string& hint() const noexcept { return hint_; }

 private:
  std::string sqlstate_;
  std::string detail_;
  std::string hint_;
};

// The database cannot be reached (wrong connection string, server down, a reconnection that
// failed) or is not usable (the gpu_routing extension is not installed in it).
class ConnectionError : public Error {
 public:
  using Error::Error;
};

// The server refused or failed a call: a missing table, a bad edges query, an invalid setting,
// a memory limit. sqlstate() says which.
class ServerError : public Error {
 public:
  using Error::Error;
};

// A call ran past its timeout (statement_timeout, SQLSTATE 57014) or was cancelled.
class TimeoutError : public ServerError {
 public:
  using ServerError::ServerError;
};

// The client was called wrongly (an empty table name, a NaN cost bound).
class UsageError : public Error {
 public:
  using Error::Error;
};

// ---------------------------------------------------------------------------------------------
// Where the edges come from.

// A table (or view) of edges and the names of its columns. Names are quoted as identifiers with the
// connection's own quoting, so any name is safe, and case matters as in "MyTable".
struct EdgeTable {
  EdgeTable() = default;
  explicit EdgeTable(std::string table_name, std::string schema_name = {})
      : table(std::move(table_name)), schema(std::move(schema_name)) {}

  std::string table;
  std::string schema;  // empty: found through the search_path
  std::string id_column = "id";
  std::string source_column = "source";
  std::string target_column = "target";
  std::string cost_column = "cost";
  std::string reverse_cost_column;  // empty: no reverse_cost (each row is one arc)
};

// A table, an edges query (the edges_sql of the SQL functions: it returns id, source, target,
// cost and optionally reverse_cost by name), or a kept graph by name. The text is sent as a bound
// parameter.
//
// Kept graphs (gpu_graph_create) are built once into the server's shared memory and serve calls
// without reading or building the graph. from_graph("ny") sends 'graph:ny'. A table or a query
// is served by a kept graph too when the text sent is that graph's registered query (whitespace
// aside) reading the same tables: a table source sends the plain text a person would register,
// "SELECT id, source, target, cost FROM ny_edges" (names quoted only where SQL needs it, "AS"
// only where a column is renamed). LastRun::graph tells which kept graph served a call.
class EdgeSource {
 public:
  static EdgeSource from_table(EdgeTable table);
  static EdgeSource from_query(std::string edges_sql);
  // name: a kept graph of the router's database (an identifier: letters, digits and _, at most
  // 63 bytes). Calls fail with ServerError 42704 when the database has no graph of that name.
  static EdgeSource from_graph(std::string name);

  bool is_query() const noexcept { return kind_ == Kind::kQuery; }
  bool is_graph() const noexcept { return kind_ == Kind::kGraph; }
  const EdgeTable& table() const noexcept { return table_; }
  // The edges query; for a kept graph, 'graph:NAME'.
  const std::string& query() const noexcept { return query_; }
  // The kept graph's name; empty unless is_graph().
  const std::string& graph() const noexcept { return graph_; }

 private:
  enum class Kind { kTable, kQuery, kGraph };
  Kind kind_ = Kind::kTable;
  EdgeTable table_;
  std::string query_;
  std::string graph_;
};

// A table of vertex coordinates, for nearest-vertex lookups and for drawing routes.
// scripts/load_ny.sh creates ny_vertices(id, lon, lat) with a GiST index on point(lon, lat), which
// nearest_vertex() uses.
struct VertexTable {
  VertexTable() = default;
  explicit VertexTable(std::string table_name, std::string schema_name = {})
      : table(std::move(table_name)), schema(std::move(schema_name)) {}

  std::string table;
  std::string schema;  // empty: found through the search_path
  std::string id_column = "id";
  std::string lon_column = "lon";
  std::string lat_column = "lat";
};

// ---------------------------------------------------------------------------------------------
// Options.

// gpu_routing.* settings of the router's session, applied with set_config() when it connects and
// after every reconnection. Empty or unset members leave the server's setting alone.
struct EngineSettings {
  std::string device;          // auto | gpu | cpu
  std::string sssp_algorithm;  // auto or an engine of gpu_routing_info()
  std::string apsp_algorithm;  // auto or an engine of gpu_routing_info()
  std::optional<int> threads;  // OpenMP threads (0 = every core)
  std::string max_memory;      // e.g. "8GB"
  // Any other setting, as (name, value): {"gpu_routing.block_size", "256"}.
  std::vector<std::pair<std::string, std::string>> other;
};

struct RouterOptions {
  bool directed = true;
  EngineSettings engine;
  // Timeout of every call unless the call gives its own; unset: the server's statement_timeout;
  // zero: none.
  std::optional<std::chrono::milliseconds> timeout;
  // Cost matrices are requested in batches of sources of about this many cells each, so neither
  // the client nor the server holds more than one batch of result rows at a time.
  std::size_t matrix_batch_cells = std::size_t{1} << 20;
  // Shown in pg_stat_activity; empty: libpq's default (PGAPPNAME).
  std::string application_name;
};

struct CallOptions {
  // Overrides RouterOptions::timeout for this call (zero: none): statement_timeout while it
  // runs. A cost matrix requested in batches is given the time left of this budget on each batch.
  std::optional<std::chrono::milliseconds> timeout;
};

// How far a cost matrix has come; passed to MatrixOptions::on_progress after every batch.
struct MatrixProgress {
  std::size_t sources_done = 0;
  std::size_t sources_total = 0;
  std::size_t batches_done = 0;
  std::size_t batches_total = 0;
  double elapsed_seconds = 0;
};

struct MatrixOptions : CallOptions {
  // Sources per request; 0: RouterOptions::matrix_batch_cells / number of targets.
  std::size_t batch_sources = 0;
  std::function<void(const MatrixProgress&)> on_progress;
};

// ---------------------------------------------------------------------------------------------
// Results: plain structs.

// One row of a path, as gpu_path / pgr_dijkstra give it: the vertex, the edge taken from it (-1
// at the last vertex), that edge's cost (0 at the last vertex) and the cost from the start.
struct PathStep {
  VertexId node = 0;
  EdgeId edge = -1;
  double cost = 0;
  double agg_cost = 0;
};

struct Path {
  VertexId start = 0;
  VertexId end = 0;
  double cost = 0;              // total: agg_cost of the last step
  std::vector<PathStep> steps;  // start first, end last

  std::vector<VertexId> nodes() const;
  std::vector<EdgeId> edges() const;  // the edges taken, without the final -1
};

// A cost matrix, row-major: costs[i * targets.size() + j] is the cost from sources[i] to
// targets[j], kUnreachable where there is no path, 0 where sources[i] == targets[j]. Rows and
// columns follow the ids as given, duplicates included.
struct CostMatrix {
  std::vector<VertexId> sources;
  std::vector<VertexId> targets;
  std::vector<double> costs;

  double at(std::size_t source_index, std::size_t target_index) const {
    return costs[source_index * targets.size() + target_index];
  }
};

// One batch of rows of a cost matrix: rows first_source .. first_source + sources.size() - 1.
struct CostMatrixBatch {
  std::size_t first_source = 0;
  std::vector<VertexId> sources;
  const std::vector<VertexId>* targets = nullptr;
  std::vector<double> costs;  // sources.size() x targets->size(), row-major

  double at(std::size_t row, std::size_t target_index) const {
    return costs[row * targets->size() + target_index];
  }
};

// A vertex within reach: its distance from the source, and the shortest-path tree arc into it
// (none for the source itself).
struct Reached {
  VertexId node = 0;
  double distance = 0;
  std::optional<VertexId> predecessor;
  std::optional<EdgeId> edge;
};

struct Location {
  VertexId id = 0;
  double lon = 0;
  double lat = 0;
};

// A nearest-vertex answer: the vertex, and how far it is from the point asked for.
struct NearestVertex {
  Location vertex;
  double distance_m = 0;  // great-circle metres
};

// gpu_routing_last_run(): where the last call ran and where its milliseconds went.
struct LastRun {
  std::string function, device, algorithm, reason, notes;
  // The kept graph that served the call; empty when none did (the edges were read and built for
  // the call, or read privately: notes says why) and on a database older than gpu_routing 0.2.0.
  std::string graph;
  std::int64_t vertices = 0, edges = 0, sources = 0, rows = 0, rounds = 0;
  double load_ms = 0, build_ms = 0, compute_ms = 0, transfer_ms = 0, emit_ms = 0, total_ms = 0;
};

// gpu_graphs(): a kept graph of the database. Its query is shown only to roles that may read it
// (its owner, roles that may SELECT every table it reads, ...): edges_sql is empty otherwise.
struct KeptGraph {
  std::string name, owner, edges_sql, refresh, state, forms, note;
  std::int64_t vertices = 0, edges = 0;  // 0 until it is built
};

// ---------------------------------------------------------------------------------------------

class Router {
 public:
  // conninfo: a libpq connection string or URI; empty: the PG* environment variables. Connects
  // at once; throws ConnectionError when that fails or the extension is missing, ServerError
  // when a setting is refused.
  Router(std::string conninfo, EdgeSource edges, RouterOptions options = {});
  ~Router();
  Router(Router&&) noexcept;
  Router& operator=(Router&&) noexcept;
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // The cheapest path from `from` to `to`; nullopt when there is none, when either vertex is not
  // in the graph, or when from == to (gpu_path's convention).
  std::optional<Path> path(VertexId from, VertexId to, const CallOptions& call = {});

  // Paths from every `froms` to every `tos` in one request; pairs without a path are left out.
  // Ordered by start, then end; duplicate ids are merged.
  std::vector<Path> paths(const std::vector<VertexId>& froms, const std::vector<VertexId>& tos,
                          const CallOptions& call = {});

  // Costs between every pair of `ids`, or from every source to every target.
  CostMatrix cost_matrix(const std::vector<VertexId>& ids, const MatrixOptions& call = {});
  CostMatrix cost_matrix(const std::vector<VertexId>& sources, const std::vector<VertexId>& targets,
                         const MatrixOptions& call = {});
  // The same matrix delivered batch by batch: only one batch is held at a time.
  void cost_matrix_batches(const std::vector<VertexId>& sources,
                           const std::vector<VertexId>& targets,
                           const std::function<void(const CostMatrixBatch&)>& on_batch,
                           const MatrixOptions& call = {});

  // Every vertex within max_cost of `from` (the source included), ordered by vertex id. The
  // distance filter runs in the database, so only those rows travel.
  std::vector<Reached> reachable(VertexId from, double max_cost, const CallOptions& call = {});

  // The vertex of `vertices` nearest to (lon, lat); nullopt when the table is empty.
  std::optional<NearestVertex> nearest_vertex(const VertexTable& vertices, double lon, double lat,
                                              const CallOptions& call = {});
  // The coordinates of `ids`, in their order; nullopt for an id the table does not have.
  std::vector<std::optional<Location>> locations(const VertexTable& vertices,
                                                 const std::vector<VertexId>& ids,
                                                 const CallOptions& call = {});

  // gpu_routing_last_run() of this router's session; nullopt before the first call (and after a
  // reconnection, which starts a new session).
  std::optional<LastRun> last_run();

  // The kept graphs of the database (gpu_graphs()), by name; empty on a database older than
  // gpu_routing 0.2.0.
  std::vector<KeptGraph> kept_graphs(const CallOptions& call = {});

  // The edges_sql every call sends ('graph:NAME' for a kept graph named).
  const std::string& edges_sql() const;
  bool directed() const;
  // The server process of the current connection (pg_backend_pid()).
  int backend_pid() const;
  // How many times the connection was reopened after breaking.
  int reconnections() const;
  // Server messages below ERROR (NOTICE, WARNING) of the last call, one per line.
  const std::vector<std::string>& notices() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpu_routing
