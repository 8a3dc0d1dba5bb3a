// The Router: one libpqxx connection, prepared statements with bound parameters, errors turned
// into gpu_routing exceptions, one reconnection and retry when the connection breaks.
#include "gpu_routing/router.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include <poll.h>

#include <pqxx/pqxx>

#include "text.hpp"

namespace gpu_routing {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

Error::Error(const std::string& message, std::string sqlstate, std::string detail, std::string hint)
    : std::runtime_error(message),
      sqlstate_(std::move(sqlstate)),
      detail_(std::move(detail)),
      hint_(std::move(hint)) {}

EdgeSource EdgeSource::from_table(EdgeTable table) {
  if (table.table.empty()) throw UsageError("the edge table name is empty");
  for (const std::string* column :
       {&table.id_column, &table.source_column, &table.target_column, &table.cost_column}) {
    if (column->empty())
      throw UsageError("a column name of edge table " + table.table + " is empty");
  }
  EdgeSource source;
  source.table_ = std::move(table);
  return source;
}

EdgeSource EdgeSource::from_query(std::string edges_sql) {
  if (edges_sql.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw UsageError("the edges query is empty");
  }
  EdgeSource source;
  source.kind_ = Kind::kQuery;
  source.query_ = std::move(edges_sql);
  return source;
}

namespace {

// The server's rule for kept graph names (gpu_graph_create), checked here so that a wrong name
// fails before connecting, with a message naming it.
bool valid_graph_name(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

}  // namespace

EdgeSource EdgeSource::from_graph(std::string name) {
  if (name.empty()) throw UsageError("the kept graph name is empty");
  if (!valid_graph_name(name)) {
    throw UsageError("\"" + name +
                     "\" is not a kept graph name (letters, digits and _, not starting with a "
                     "digit, at most 63 bytes)");
  }
  EdgeSource source;
  source.kind_ = Kind::kGraph;
  source.query_ = "graph:" + name;
  source.graph_ = std::move(name);
  return source;
}

std::vector<VertexId> Path::nodes() const {
  std::vector<VertexId> nodes;
  nodes.reserve(steps.size());
  for (const PathStep& step : steps) nodes.push_back(step.node);
  return nodes;
}

std::vector<EdgeId> Path::edges() const {
  std::vector<EdgeId> edges;
  if (steps.size() > 1) edges.reserve(steps.size() - 1);
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) edges.push_back(steps[i].edge);
  return edges;
}

namespace {

// Statement names; their texts are made per connection (the extension's schema is looked up).
constexpr const char* kPathStatement = "gpu_routing_path";
constexpr const char* kPathsStatement = "gpu_routing_paths";
constexpr const char* kMatrixStatement = "gpu_routing_matrix";
constexpr const char* kReachableStatement = "gpu_routing_reachable";
constexpr const char* kLastRunStatement = "gpu_routing_last_run";
constexpr const char* kKeptGraphsStatement = "gpu_routing_kept_graphs";
constexpr const char* kSetConfigStatement = "gpu_routing_set_config";

constexpr const char* kQueryCanceled = "57014";

// Collects the server's notices instead of letting libpqxx print them: library code never prints.
class NoticeCollector final : public pqxx::errorhandler {
 public:
  NoticeCollector(pqxx::connection_base& connection, std::vector<std::string>* notices)
      : pqxx::errorhandler(connection), notices_(notices) {}
  bool operator()(const char message[]) noexcept override {
    try {
      if (notices_->size() < 100) notices_->push_back(text::one_line(message));
    } catch (...) {
      // Out of memory while keeping a notice: losing it is harmless.
    }
    return false;
  }

 private:
  std::vector<std::string>* notices_;
};

std::string as_string(const pqxx::field& field) {
  return std::string(field.c_str(), field.size());
}

std::int64_t as_int64(const pqxx::field& field) {
  const auto value = text::parse_int64(std::string_view(field.c_str(), field.size()));
  if (!value) throw Error("unexpected bigint from the server: " + as_string(field));
  return *value;
}

double as_double(const pqxx::field& field) {
  const auto value = text::parse_double(std::string_view(field.c_str(), field.size()));
  if (!value) throw Error("unexpected float8 from the server: " + as_string(field));
  return *value;
}

std::optional<std::int64_t> as_optional_int64(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return as_int64(field);
}

// statement_timeout's text; zero (or less) turns the timeout off, as it does in PostgreSQL.
std::string milliseconds_text(milliseconds duration) {
  if (duration.count() <= 0) return "0";
  return std::to_string(duration.count()) + "ms";
}

// The error a failed statement becomes: the server's message, SQLSTATE, detail and hint.
[[noreturn]] void throw_server_error(const pqxx::sql_error& error) {
  const text::ServerMessage message = text::parse_server_message(error.what());
  const std::string primary =
      message.primary.empty() ? text::one_line(error.what()) : message.primary;
  if (error.sqlstate() == kQueryCanceled) {
    throw TimeoutError(primary, error.sqlstate(), message.detail, message.hint);
  }
  throw ServerError(primary, error.sqlstate(), message.detail, message.hint);
}

// Unique ids in first-seen order.
std::vector<VertexId> unique_ids(const std::vector<VertexId>& ids) {
  std::vector<VertexId> unique;
  std::unordered_set<VertexId> seen;
  unique.reserve(ids.size());
  for (VertexId id : ids) {
    if (seen.insert(id).second) unique.push_back(id);
  }
  return unique;
}

// Where each id sits in a list that may repeat ids: the first position, and the later positions
// that copy it.
struct Positions {
  std::unordered_map<VertexId, std::size_t> first;
  std::vector<std::pair<std::size_t, std::size_t>> copies;  // (from, to)

  explicit Positions(const std::vector<VertexId>& ids) {
    first.reserve(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const auto [it, inserted] = first.emplace(ids[i], i);
      if (!inserted) copies.emplace_back(it->second, i);
    }
  }
  std::optional<std::size_t> find(VertexId id) const {
    const auto it = first.find(id);
    if (it == first.end()) return std::nullopt;
    return it->second;
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------

struct Router::State {
  std::string conninfo;
  EdgeSource edges;
  RouterOptions options;

  // Declared before the notice collector, so the collector (which unregisters itself from the
  // connection) is destroyed first.
  std::unique_ptr<pqxx::connection> connection;
  std::unique_ptr<NoticeCollector> notice_collector;
  std::vector<std::string> notices;

  std::string edges_sql;
  std::string functions_prefix;           // the extension's schema, quoted, with a dot
  std::string session_statement_timeout;  // statement_timeout when the session began
  std::string applied_statement_timeout;  // what the session has now
  int backend_pid = 0;
  int reconnections = 0;
  // gpu_apsp_array exists (gpu_routing 0.2.0 on): matrices come as one float8[] per source;
  // otherwise (a database still on 0.1.0) as gpu_apsp's rows.
  bool cost_arrays = true;
  // Kept graphs exist (0.2.0 on): gpu_graphs() and gpu_routing_last_run().graph.
  bool kept_graphs = true;
  // Statements made for vertex tables: name -> text, prepared again on every new connection.
  std::unordered_map<std::string, std::string> vertex_statements;
  std::unordered_map<std::string, std::string> vertex_statement_names;  // text -> name

  State(std::string conninfo_, EdgeSource edges_, RouterOptions options_)
      : conninfo(std::move(conninfo_)), edges(std::move(edges_)), options(std::move(options_)) {}

  void open();
  void connect();
  void drop_connection() noexcept;
  void apply_settings(pqxx::nontransaction& tx);
  std::string build_edges_sql(pqxx::nontransaction& tx) const;
  std::string quoted_relation(const std::string& schema, const std::string& table) const;
  void apply_timeout(const std::optional<milliseconds>& timeout);
  std::optional<milliseconds> effective_timeout(const CallOptions& call) const {
    return call.timeout ? call.timeout : options.timeout;
  }
  bool connection_lost() const { return !connection || !connection->is_open(); }
  bool closed_while_idle();
  std::string vertex_statement(const std::string& sql);

  // Runs a read-only call: body(transaction) -> result. A connection that broke (between calls,
  // or under this one) is reopened once and the call run again; server errors become exceptions.
  template <typename Body>
  auto run(const std::optional<milliseconds>& timeout, Body&& body)
      -> decltype(body(std::declval<pqxx::nontransaction&>()));
};

std::string Router::State::quoted_relation(const std::string& schema,
                                           const std::string& table) const {
  std::string name;
  if (!schema.empty()) name = connection->quote_name(schema) + ".";
  return name + connection->quote_name(table);
}

// A table source becomes the query a person would write and register as a kept graph, so that
// a kept graph registered with it serves the router's calls (the server matches the text,
// whitespace aside): "SELECT id, source, target, cost FROM ny_edges". The server's quote_ident
// quotes a name only where SQL needs it (capitals, odd characters, reserved words), which needs
// its list of keywords; "AS" only where a column is renamed.
std::string Router::State::build_edges_sql(pqxx::nontransaction& tx) const {
  if (edges.is_query() || edges.is_graph()) return edges.query();
  const EdgeTable& table = edges.table();
  const pqxx::row quoted = tx.exec_params1(
      "SELECT pg_catalog.quote_ident($1), pg_catalog.quote_ident($2), pg_catalog.quote_ident($3), "
      "pg_catalog.quote_ident($4), pg_catalog.quote_ident($5), pg_catalog.quote_ident($6), "
      "pg_catalog.quote_ident($7)",
      table.schema, table.table, table.id_column, table.source_column, table.target_column,
      table.cost_column, table.reverse_cost_column);
  auto column = [&](int field, const char* as) {
    const std::string name = as_string(quoted[field]);
    return name == as ? name : name + " AS " + as;
  };
  std::string sql = "SELECT " + column(2, "id") + ", " + column(3, "source") + ", " +
                    column(4, "target") + ", " + column(5, "cost");
  if (!table.reverse_cost_column.empty()) sql += ", " + column(6, "reverse_cost");
  sql += " FROM ";
  if (!table.schema.empty()) sql += as_string(quoted[0]) + ".";
  return sql + as_string(quoted[1]);
}

void Router::State::open() {
  try {
    connect();
  } catch (const pqxx::sql_error& error) {
    drop_connection();
    throw_server_error(error);
  } catch (const pqxx::failure& error) {
    drop_connection();
    throw ConnectionError("cannot set up the session: " + text::one_line(error.what()));
  } catch (...) {
    drop_connection();
    throw;
  }
}

void Router::State::drop_connection() noexcept {
  notice_collector.reset();
  connection.reset();
}

// Opens a session and sets it up. Only a session set up completely is kept (open() drops the
// rest), so no call ever runs without the router's settings.
void Router::State::connect() {
  drop_connection();
  try {
    connection = std::make_unique<pqxx::connection>(conninfo);
  } catch (const pqxx::sql_error& error) {
    throw ConnectionError("cannot connect: " + text::one_line(error.what()), error.sqlstate());
  } catch (const pqxx::failure& error) {
    throw ConnectionError("cannot connect: " + text::one_line(error.what()));
  }
  notice_collector = std::make_unique<NoticeCollector>(*connection, &notices);
  applied_statement_timeout.clear();

  pqxx::nontransaction tx(*connection);
  const pqxx::row session = tx.exec1(
      "SELECT pg_backend_pid(), current_setting('statement_timeout'), current_database(), "
      "(SELECT n.nspname FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n "
      " ON n.oid = e.extnamespace WHERE e.extname = 'gpu_routing')");
  backend_pid = static_cast<int>(as_int64(session[0]));
  session_statement_timeout = as_string(session[1]);
  if (session[3].is_null()) {
    throw ConnectionError("database \"" + as_string(session[2]) + "\" has no gpu_routing extension",
                          "", "", "Run CREATE EXTENSION gpu_routing; in that database.");
  }
  functions_prefix = connection->quote_name(as_string(session[3])) + ".";
  edges_sql = build_edges_sql(tx);

  const std::string& f = functions_prefix;
  connection->prepare(kSetConfigStatement,
                      "SELECT pg_catalog.set_config($1::text, $2::text, false)");
  connection->prepare(kPathStatement, "SELECT node, edge, cost, agg_cost FROM " + f +
                                          "gpu_path($1::text, $2::bigint, $3::bigint, "
                                          "$4::boolean) ORDER BY seq");
  connection->prepare(
      kPathsStatement,
      "SELECT start_vid, end_vid, node, edge, cost, agg_cost, path_seq FROM " + f +
          "gpu_path($1::text, $2::bigint[], $3::bigint[], $4::boolean) ORDER BY seq");
  const pqxx::row features = tx.exec_params1(
      "SELECT pg_catalog.to_regprocedure($1) IS NOT NULL, pg_catalog.to_regprocedure($2) IS NOT "
      "NULL",
      f + "gpu_apsp_array(text, bigint[], bigint[], boolean)", f + "gpu_graphs()");
  cost_arrays = features[0].as<bool>();
  kept_graphs = features[1].as<bool>();
  if (cost_arrays) {
    // One row per distinct source in the graph, its costs to the targets in their order.
    connection->prepare(kMatrixStatement, "SELECT start_vid, agg_costs FROM " + f +
                                              "gpu_apsp_array($1::text, $2::bigint[], "
                                              "$3::bigint[], $4::boolean)");
  } else {
    // One row per reachable pair of distinct vertices (pgr_dijkstraCost's rows).
    connection->prepare(kMatrixStatement, "SELECT start_vid, end_vid, agg_cost FROM " + f +
                                              "gpu_apsp($1::text, $2::bigint[], $3::bigint[], "
                                              "$4::boolean)");
  }
  // The distance bound is applied in the database: only the rows within reach are sent.
  connection->prepare(kReachableStatement, "SELECT node, distance, predecessor, edge FROM " + f +
                                               "gpu_sssp($1::text, $2::bigint, $3::boolean) "
                                               "WHERE distance <= $4::float8 ORDER BY node");
  // 0.1.0's gpu_routing_last_run() has no column graph (it came with kept graphs).
  connection->prepare(kLastRunStatement,
                      std::string("SELECT function, device, algorithm, reason, vertices, edges, "
                                  "sources, rows, rounds, load_ms, build_ms, compute_ms, "
                                  "transfer_ms, emit_ms, total_ms, notes, ") +
                          (kept_graphs ? "graph" : "NULL::text") + " FROM " + f +
                          "gpu_routing_last_run()");
  if (kept_graphs) {
    connection->prepare(kKeptGraphsStatement,
                        "SELECT name, owner::text, edges_sql, refresh, state, forms, note, "
                        "vertices, edges FROM " +
                            f + "gpu_graphs() ORDER BY name");
  }
  for (const auto& [name, sql] : vertex_statements) connection->prepare(name, sql);

  apply_settings(tx);
  tx.commit();
}

void Router::State::apply_settings(pqxx::nontransaction& tx) {
  std::vector<std::pair<std::string, std::string>> settings;
  const EngineSettings& engine = options.engine;
  if (!engine.device.empty()) settings.emplace_back("gpu_routing.device", engine.device);
  if (!engine.sssp_algorithm.empty()) {
    settings.emplace_back("gpu_routing.sssp_algorithm", engine.sssp_algorithm);
  }
  if (!engine.apsp_algorithm.empty()) {
    settings.emplace_back("gpu_routing.apsp_algorithm", engine.apsp_algorithm);
  }
  if (engine.threads) settings.emplace_back("gpu_routing.threads", std::to_string(*engine.threads));
  if (!engine.max_memory.empty())
    settings.emplace_back("gpu_routing.max_memory", engine.max_memory);
  for (const auto& setting : engine.other) settings.push_back(setting);

  if (!settings.empty()) {
    // Until the module is loaded, gpu_routing.* names are placeholders that accept any value
    // and only warn when it is loaded; loading it first makes a bad value an error here.
    tx.exec("SELECT count(*) FROM " + functions_prefix + "gpu_routing_last_run()");
  }
  if (!options.application_name.empty()) {
    settings.emplace_back("application_name", options.application_name);
  }
  for (const auto& [name, value] : settings) tx.exec_prepared(kSetConfigStatement, name, value);
}

void Router::State::apply_timeout(const std::optional<milliseconds>& timeout) {
  const std::string wanted = timeout ? milliseconds_text(*timeout) : session_statement_timeout;
  if (wanted == applied_statement_timeout) return;
  pqxx::nontransaction tx(*connection);
  tx.exec_prepared(kSetConfigStatement, "statement_timeout", wanted);
  tx.commit();
  applied_statement_timeout = wanted;
}

std::string Router::State::vertex_statement(const std::string& sql) {
  const auto known = vertex_statement_names.find(sql);
  if (known != vertex_statement_names.end()) return known->second;
  const std::string name = "gpu_routing_vertices_" + std::to_string(vertex_statements.size() + 1);
  connection->prepare(name, sql);
  vertex_statements.emplace(name, sql);
  vertex_statement_names.emplace(sql, name);
  return name;
}

// Whether the server closed the connection since the last call. An idle connection has nothing
// to read unless the server sent something unasked: the message of a terminated backend and
// the end of the stream, a notification, or a changed parameter. Reading that input (one poll
// and, only then, one read) tells which, without a round trip, and spares sending a call into a
// dead connection (where libpqxx 6.4 also leaks the failed result).
bool Router::State::closed_while_idle() {
  if (!connection) return false;
  // A terminated backend's message and the end of the stream may take two reads.
  for (int read = 0; read < 4; ++read) {
    pollfd socket{connection->sock(), POLLIN, 0};
    if (socket.fd < 0) return true;
    if (::poll(&socket, 1, 0) <= 0) return false;
    try {
      connection->get_notifs();
    } catch (const pqxx::broken_connection&) {
      return true;
    }
    if (connection_lost()) return true;
  }
  return false;
}

template <typename Body>
auto Router::State::run(const std::optional<milliseconds>& timeout, Body&& body)
    -> decltype(body(std::declval<pqxx::nontransaction&>())) {
  notices.clear();
  int attempt = 0;
  if (closed_while_idle()) {
    open();
    ++reconnections;
    ++attempt;  // the one reconnection of this call is spent
  }
  for (;; ++attempt) {
    std::string lost;  // why the connection broke, when it did
    try {
      if (!connection) open();
      apply_timeout(timeout);
      pqxx::nontransaction tx(*connection);
      auto result = body(tx);
      tx.commit();
      return result;
    } catch (const pqxx::broken_connection& error) {
      lost = text::one_line(error.what());
    } catch (const pqxx::sql_error& error) {
      // A backend that was terminated answers with a FATAL error (57P01) and hangs up.
      if (!connection_lost()) throw_server_error(error);
      lost = text::one_line(error.what());
    } catch (const pqxx::failure& error) {
      if (!connection_lost()) throw Error(text::one_line(error.what()));
      lost = text::one_line(error.what());
    }
    if (attempt > 0) {
      throw ConnectionError("the connection broke again after reconnecting: " + lost);
    }
    // Every call is read-only, so running it again after reopening the connection is safe.
    open();
    ++reconnections;
  }
}

// ---------------------------------------------------------------------------------------------

Router::Router(std::string conninfo, EdgeSource edges, RouterOptions options)
    : state_(std::make_unique<State>(std::move(conninfo), std::move(edges), std::move(options))) {
  if (!state_->edges.is_query() && !state_->edges.is_graph() &&
      state_->edges.table().table.empty()) {
    throw UsageError("no edge source: use EdgeSource::from_table or EdgeSource::from_query");
  }
  state_->open();
}

Router::~Router() = default;
Router::Router(Router&&) noexcept = default;
Router& Router::operator=(Router&&) noexcept = default;

const std::string& Router::edges_sql() const {
  return state_->edges_sql;
}
bool Router::directed() const {
  return state_->options.directed;
}
int Router::backend_pid() const {
  return state_->backend_pid;
}
int Router::reconnections() const {
  return state_->reconnections;
}
const std::vector<std::string>& Router::notices() const {
  return state_->notices;
}

namespace {
const char* bool_text(bool value) {
  return value ? "true" : "false";
}
}  // namespace

std::optional<Path> Router::path(VertexId from, VertexId to, const CallOptions& call) {
  State& s = *state_;
  return s.run(s.effective_timeout(call), [&](pqxx::nontransaction& tx) -> std::optional<Path> {
    const pqxx::result rows = tx.exec_prepared(kPathStatement, s.edges_sql, std::to_string(from),
                                               std::to_string(to), bool_text(s.options.directed));
    if (rows.empty()) return std::nullopt;
    Path path;
    path.start = from;
    path.end = to;
    path.steps.reserve(rows.size());
    for (const pqxx::row& row : rows) {
      path.steps.push_back(
          PathStep{as_int64(row[0]), as_int64(row[1]), as_double(row[2]), as_double(row[3])});
    }
    path.cost = path.steps.back().agg_cost;
    return path;
  });
}

std::vector<Path> Router::paths(const std::vector<VertexId>& froms,
                                const std::vector<VertexId>& tos, const CallOptions& call) {
  if (froms.empty() || tos.empty()) return {};
  State& s = *state_;
  const std::string from_literal = text::bigint_array_literal(froms);
  const std::string to_literal = text::bigint_array_literal(tos);
  return s.run(s.effective_timeout(call), [&](pqxx::nontransaction& tx) {
    const pqxx::result rows = tx.exec_prepared(kPathsStatement, s.edges_sql, from_literal,
                                               to_literal, bool_text(s.options.directed));
    std::vector<Path> paths;
    for (const pqxx::row& row : rows) {
      if (paths.empty() || as_int64(row[6]) == 1) {  // path_seq 1 starts the next path
        paths.emplace_back();
        paths.back().start = as_int64(row[0]);
        paths.back().end = as_int64(row[1]);
      }
      paths.back().steps.push_back(
          PathStep{as_int64(row[2]), as_int64(row[3]), as_double(row[4]), as_double(row[5])});
    }
    for (Path& path : paths) path.cost = path.steps.back().agg_cost;
    return paths;
  });
}

CostMatrix Router::cost_matrix(const std::vector<VertexId>& ids, const MatrixOptions& call) {
  return cost_matrix(ids, ids, call);
}

CostMatrix Router::cost_matrix(const std::vector<VertexId>& sources,
                               const std::vector<VertexId>& targets, const MatrixOptions& call) {
  CostMatrix matrix;
  matrix.sources = sources;
  matrix.targets = targets;
  matrix.costs.assign(sources.size() * targets.size(), kUnreachable);
  cost_matrix_batches(
      sources, targets,
      [&](const CostMatrixBatch& batch) {
        std::copy(batch.costs.begin(), batch.costs.end(),
                  matrix.costs.begin() +
                      static_cast<std::ptrdiff_t>(batch.first_source * targets.size()));
      },
      call);
  return matrix;
}

void Router::cost_matrix_batches(const std::vector<VertexId>& sources,
                                 const std::vector<VertexId>& targets,
                                 const std::function<void(const CostMatrixBatch&)>& on_batch,
                                 const MatrixOptions& call) {
  State& s = *state_;
  const auto started = Clock::now();
  const std::size_t target_count = targets.size();
  // The targets go as given, duplicates included: gpu_apsp_array's columns are then the
  // matrix's. The batch size counts distinct targets, as the server's work does.
  const std::string target_literal = text::bigint_array_literal(targets);
  std::unordered_map<VertexId, std::vector<std::size_t>> target_columns;  // rows only
  if (!s.cost_arrays)
    for (std::size_t j = 0; j < target_count; ++j) target_columns[targets[j]].push_back(j);
  std::size_t batch_size = call.batch_sources;
  if (batch_size == 0) {
    batch_size = std::max<std::size_t>(
        1, s.options.matrix_batch_cells / std::max<std::size_t>(1, unique_ids(targets).size()));
  }
  MatrixProgress progress;
  progress.sources_total = sources.size();
  progress.batches_total = sources.empty() ? 0 : (sources.size() + batch_size - 1) / batch_size;
  if (call.on_progress) call.on_progress(progress);
  if (sources.empty() || targets.empty()) return;

  const std::optional<milliseconds> budget = s.effective_timeout(call);
  CostMatrixBatch batch;
  batch.targets = &targets;
  std::vector<char> row_filled;
  for (std::size_t first = 0; first < sources.size(); first += batch_size) {
    const std::size_t count = std::min(batch_size, sources.size() - first);
    batch.first_source = first;
    batch.sources.assign(sources.begin() + static_cast<std::ptrdiff_t>(first),
                         sources.begin() + static_cast<std::ptrdiff_t>(first + count));
    const Positions row_positions(batch.sources);
    batch.costs.assign(count * target_count, kUnreachable);

    // The call's timeout covers the whole matrix: each batch gets what is left of it.
    std::optional<milliseconds> timeout = budget;
    if (budget && budget->count() > 0) {
      const auto left = *budget - std::chrono::duration_cast<milliseconds>(Clock::now() - started);
      if (left.count() <= 0) {
        throw TimeoutError("the cost matrix ran past its timeout of " +
                               std::to_string(budget->count()) + " ms after " +
                               std::to_string(first) + " of " + std::to_string(sources.size()) +
                               " sources",
                           kQueryCanceled);
      }
      timeout = left;
    }
    const std::string source_literal = text::bigint_array_literal(unique_ids(batch.sources));
    s.run(timeout, [&](pqxx::nontransaction& tx) {
      row_filled.assign(count, 0);
      const pqxx::result rows = tx.exec_prepared(kMatrixStatement, s.edges_sql, source_literal,
                                                 target_literal, bool_text(s.options.directed));
      if (!s.cost_arrays) {
        // Rows: a source in the graph is 0 to itself, each pair's cost goes to every column of
        // its target (targets may repeat), absent pairs stay unreachable.
        for (const pqxx::row& row : rows) {
          const auto source_row = row_positions.find(as_int64(row[0]));
          if (!source_row) continue;
          row_filled[*source_row] = 1;
          const auto columns = target_columns.find(as_int64(row[1]));
          if (columns == target_columns.end()) continue;
          const double cost = *text::parse_double(std::string_view(row[2].c_str(), row[2].size()));
          for (const std::size_t j : columns->second)
            batch.costs[*source_row * target_count + j] = cost;
        }
        return true;
      }
      for (const pqxx::row& row : rows) {
        const auto source_row = row_positions.find(as_int64(row[0]));
        if (!source_row) continue;
        const pqxx::field costs = row[1];
        if (!text::parse_double_array(std::string_view(costs.c_str(), costs.size()),
                                      batch.costs.data() + *source_row * target_count,
                                      target_count)) {
          throw Error("unexpected costs from the server for source " + as_string(row[0]) +
                      " (expected a float8[] of " + std::to_string(target_count) +
                      " numbers): " + as_string(costs).substr(0, 200));
        }
        row_filled[*source_row] = 1;
      }
      return true;
    });
    // A source not in the graph has no row: left unreachable, but 0 to itself (from rows, every
    // source is: they hold no pair of a vertex with itself).
    for (const auto& [id, row] : row_positions.first) {
      if (row_filled[row] && s.cost_arrays) continue;
      double* costs = batch.costs.data() + row * target_count;
      for (std::size_t j = 0; j < target_count; ++j) {
        if (targets[j] == id) costs[j] = 0;
      }
    }
    // Repeated sources: copy the rows of their first occurrence.
    for (const auto& [from, to] : row_positions.copies) {
      std::copy_n(batch.costs.begin() + static_cast<std::ptrdiff_t>(from * target_count),
                  target_count,
                  batch.costs.begin() + static_cast<std::ptrdiff_t>(to * target_count));
    }
    on_batch(batch);
    progress.sources_done = first + count;
    ++progress.batches_done;
    progress.elapsed_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    if (call.on_progress) call.on_progress(progress);
  }
}

std::vector<Reached> Router::reachable(VertexId from, double max_cost, const CallOptions& call) {
  if (std::isnan(max_cost)) throw UsageError("max_cost of reachable() is NaN");
  State& s = *state_;
  const std::string bound = text::format_double(max_cost);
  return s.run(s.effective_timeout(call), [&](pqxx::nontransaction& tx) {
    const pqxx::result rows =
        tx.exec_prepared(kReachableStatement, s.edges_sql, std::to_string(from),
                         bool_text(s.options.directed), bound);
    std::vector<Reached> reached;
    reached.reserve(rows.size());
    for (const pqxx::row& row : rows) {
      reached.push_back(Reached{as_int64(row[0]), as_double(row[1]), as_optional_int64(row[2]),
                                as_optional_int64(row[3])});
    }
    return reached;
  });
}

namespace {

void check_vertex_table(const VertexTable& vertices) {
  if (vertices.table.empty()) throw UsageError("the vertex table name is empty");
  if (vertices.id_column.empty() || vertices.lon_column.empty() || vertices.lat_column.empty()) {
    throw UsageError("a column name of vertex table " + vertices.table + " is empty");
  }
}

}  // namespace

std::optional<NearestVertex> Router::nearest_vertex(const VertexTable& vertices, double lon,
                                                    double lat, const CallOptions& call) {
  check_vertex_table(vertices);
  if (!std::isfinite(lon) || !std::isfinite(lat)) {
    throw UsageError("the coordinates of a nearest-vertex lookup are not finite numbers");
  }
  State& s = *state_;
  return s.run(
      s.effective_timeout(call), [&](pqxx::nontransaction& tx) -> std::optional<NearestVertex> {
        const std::string id = s.connection->quote_name(vertices.id_column);
        const std::string x = s.connection->quote_name(vertices.lon_column);
        const std::string y = s.connection->quote_name(vertices.lat_column);
        // The GiST index on point(lon, lat) gives the nearest candidates in degrees (KNN order);
        // the closest of them in great-circle metres wins, since a degree of longitude is shorter
        // than one of latitude away from the equator.
        const std::string name = s.vertex_statement(
            "SELECT id, lon, lat, 2 * 6371008.8 * asin(least(1, sqrt(sin(radians(lat - $2) / 2) ^ "
            "2 "
            "+ cos(radians($2)) * cos(radians(lat)) * sin(radians(lon - $1) / 2) ^ 2))) AS metres "
            "FROM (SELECT " +
            id + "::bigint AS id, " + x + "::float8 AS lon, " + y + "::float8 AS lat FROM " +
            s.quoted_relation(vertices.schema, vertices.table) + " ORDER BY point(" + x + ", " + y +
            ") <-> point($1::float8, $2::float8) LIMIT 32) AS c "
            "ORDER BY metres, id LIMIT 1");
        const pqxx::result rows =
            tx.exec_prepared(name, text::format_double(lon), text::format_double(lat));
        if (rows.empty()) return std::nullopt;
        const pqxx::row row = rows[0];
        return NearestVertex{Location{as_int64(row[0]), as_double(row[1]), as_double(row[2])},
                             as_double(row[3])};
      });
}

std::vector<std::optional<Location>> Router::locations(const VertexTable& vertices,
                                                       const std::vector<VertexId>& ids,
                                                       const CallOptions& call) {
  check_vertex_table(vertices);
  std::vector<std::optional<Location>> found(ids.size());
  if (ids.empty()) return found;
  State& s = *state_;
  const Positions positions(ids);
  const std::string literal = text::bigint_array_literal(unique_ids(ids));
  s.run(s.effective_timeout(call), [&](pqxx::nontransaction& tx) {
    const std::string id = s.connection->quote_name(vertices.id_column);
    const std::string name = s.vertex_statement(
        "SELECT " + id + "::bigint, " + s.connection->quote_name(vertices.lon_column) +
        "::float8, " + s.connection->quote_name(vertices.lat_column) + "::float8 FROM " +
        s.quoted_relation(vertices.schema, vertices.table) + " WHERE " + id +
        " = ANY($1::bigint[])");
    const pqxx::result rows = tx.exec_prepared(name, literal);
    for (const pqxx::row& row : rows) {
      const auto position = positions.find(as_int64(row[0]));
      if (position)
        found[*position] = Location{as_int64(row[0]), as_double(row[1]), as_double(row[2])};
    }
    return true;
  });
  for (const auto& [from, to] : positions.copies) found[to] = found[from];
  return found;
}

std::optional<LastRun> Router::last_run() {
  State& s = *state_;
  return s.run(s.options.timeout, [&](pqxx::nontransaction& tx) -> std::optional<LastRun> {
    const pqxx::result rows = tx.exec_prepared(kLastRunStatement);
    if (rows.empty()) return std::nullopt;
    const pqxx::row row = rows[0];
    LastRun run;
    run.function = as_string(row[0]);
    run.device = as_string(row[1]);
    run.algorithm = as_string(row[2]);
    run.reason = as_string(row[3]);
    run.vertices = as_int64(row[4]);
    run.edges = as_int64(row[5]);
    run.sources = as_int64(row[6]);
    run.rows = as_int64(row[7]);
    run.rounds = as_int64(row[8]);
    run.load_ms = as_double(row[9]);
    run.build_ms = as_double(row[10]);
    run.compute_ms = as_double(row[11]);
    run.transfer_ms = as_double(row[12]);
    run.emit_ms = as_double(row[13]);
    run.total_ms = as_double(row[14]);
    if (!row[15].is_null()) run.notes = as_string(row[15]);
    if (!row[16].is_null()) run.graph = as_string(row[16]);
    return run;
  });
}

std::vector<KeptGraph> Router::kept_graphs(const CallOptions& call) {
  State& s = *state_;
  if (!s.kept_graphs) return {};
  return s.run(s.effective_timeout(call), [&](pqxx::nontransaction& tx) {
    const pqxx::result rows = tx.exec_prepared(kKeptGraphsStatement);
    auto text_or_empty = [](const pqxx::field& field) {
      return field.is_null() ? std::string() : as_string(field);
    };
    std::vector<KeptGraph> graphs;
    graphs.reserve(rows.size());
    for (const pqxx::row& row : rows) {
      KeptGraph graph;
      graph.name = as_string(row[0]);
      graph.owner = text_or_empty(row[1]);
      graph.edges_sql = text_or_empty(row[2]);
      graph.refresh = text_or_empty(row[3]);
      graph.state = text_or_empty(row[4]);
      graph.forms = text_or_empty(row[5]);
      graph.note = text_or_empty(row[6]);
      graph.vertices = as_optional_int64(row[7]).value_or(0);
      graph.edges = as_optional_int64(row[8]).value_or(0);
      graphs.push_back(std::move(graph));
    }
    return graphs;
  });
}

}  // namespace gpu_routing
