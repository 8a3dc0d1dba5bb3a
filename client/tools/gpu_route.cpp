// gpu-route: shortest paths, cost matrices and reachable sets from the command line, through the
// gpu_routing client library. Exit codes: 0 success, 1 no route, 2 usage or connection error,
// 3 server error; every failure prints one line on standard error.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_routing/router.hpp"
#include "text.hpp"

namespace {

using gpu_routing::VertexId;

enum ExitCode { kSuccess = 0, kNoRoute = 1, kUsageOrConnection = 2, kServerError = 3 };

constexpr const char* kHelp =
    R"help(gpu-route: shortest paths from a PostgreSQL database with the gpu_routing extension

Usage:
  gpu-route path      (--from ID | --from-coord LON,LAT) (--to ID | --to-coord LON,LAT) [options]
  gpu-route matrix    (--ids LIST | --sources LIST --targets LIST) [options]
  gpu-route reachable (--from ID | --from-coord LON,LAT) --max-cost COST [options]
  gpu-route graphs    [--db CONNINFO] [--format table|csv|json]   the kept graphs of the database
  gpu-route --help | --version

Vertices:
  --from ID                 start vertex id                          --from 1
  --from-coord LON,LAT      start at the vertex nearest to a point   --from-coord -73.9857,40.7484
  --to ID                   end vertex id (path)                     --to 5000
  --to-coord LON,LAT        end at the vertex nearest to a point     --to-coord -73.9680,40.7851
  --ids LIST                matrix between these vertices            --ids 1,2,3
  --sources LIST            matrix rows                              --sources 1,2
  --targets LIST            matrix columns                           --targets 3,4,5
                            LIST is comma-separated ids, or @FILE with ids separated by
                            spaces or lines (@- reads standard input) --ids @ids.txt
  --max-cost COST           reachable: largest distance kept         --max-cost 20000

Connection and data:
  --db CONNINFO             libpq connection string or URI; default: the PG* environment
                            variables (PGHOST, PGPORT, PGDATABASE, PGUSER, ...)
                                                                     --db "host=/tmp port=5432 dbname=roads"
  --graph NAME              a kept graph of the database instead of the edge table: built once
                            in the server, no reading or building per call   --graph ny
  --edges-table NAME        edge table [ny_edges]                    --edges-table public.ny_edges
  --id-column NAME          its edge id column [id]                  --id-column gid
  --source-column NAME      its source column [source]               --source-column from_node
  --target-column NAME      its target column [target]               --target-column to_node
  --cost-column NAME        its cost column [cost]                   --cost-column length_m
  --reverse-cost-column NAME  its reverse cost column [none]         --reverse-cost-column reverse_cost
  --edges-sql QUERY         an edges query instead of the table (id, source, target, cost
                            [, reverse_cost])    --edges-sql "SELECT id, source, target, cost FROM ny_edges WHERE cost < 5000"
  --undirected              treat every edge as two-way              --undirected
  --vertices-table NAME     vertex coordinates table [ny_vertices]   --vertices-table roads.nodes
  --vertex-id-column NAME   its id column [id]                       --vertex-id-column node_id
  --lon-column NAME         its longitude column [lon]               --lon-column x
  --lat-column NAME         its latitude column [lat]                --lat-column y

Engine (gpu_routing.* settings of the session; default: the server's):
  --device auto|gpu|cpu     where to compute                         --device gpu
  --sssp-algorithm NAME     single-source engine                     --sssp-algorithm crauser
  --apsp-algorithm NAME     many-source engine                       --apsp-algorithm dijkstra
  --threads N               CPU engine threads (0 = every core)      --threads 8
  --max-memory SIZE         memory limit of one call                 --max-memory 16GB
  --timeout SECONDS         give up after this long (statement_timeout)  --timeout 30

Output:
  --format FORMAT           table (aligned, default), csv, json, or geojson (path: a LineString
                            Feature; reachable: Point Features; needs the vertex table)
                                                                     --format geojson
  --batch-size N            matrix: sources per request [about 1M cells]  --batch-size 100
  --no-progress             matrix: no progress bar (shown on standard error when it is a
                            terminal and the rows go elsewhere)
  -v, --verbose             on standard error: the vertices found for coordinates, where the
                            server computed (gpu_routing_last_run), and which kept graph served
                            the call
  -h, --help                this text
  --version                 the version of gpu-route

Kept graphs (graphs that stay loaded in the server), made once, e.g.
  psql -c "SELECT gpu_graph_create('ny', 'SELECT id, source, target, cost FROM ny_edges')"
answer without reading and building the graph on every call. --graph ny names one. A kept graph
also serves every call whose edges query is its registered text (whitespace aside): for the edge
table gpu-route sends "SELECT id, source, target, cost FROM ny_edges" (names quoted only where
SQL needs it, AS only for renamed columns), so the graph above serves the defaults; --edges-sql
is sent as given. gpu-route graphs lists the kept graphs; -v says which one served the call.

Examples (New York, loaded by scripts/load_ny.sh):
  gpu-route path --from 1 --to 5000
  gpu-route path --graph ny --from 1 --to 5000 -v
  gpu-route path --from-coord -73.9857,40.7484 --to-coord -73.9680,40.7851 --format geojson > route.geojson
  gpu-route matrix --ids 1,100,1000,10000 --format csv
  gpu-route reachable --from 1 --max-cost 5000 --format json
  gpu-route graphs

Exit codes: 0 success, 1 no route, 2 usage or connection error, 3 server error.
)help";

// A usage mistake: exit code 2.
struct UsageFailure {
  std::string message;
};
// No route (or nothing reachable): exit code 1.
struct NoRoute {
  std::string message;
};

struct VertexSpec {
  std::optional<VertexId> id;
  double lon = 0, lat = 0;
  std::string text;  // as given, for messages
};

struct Options {
  std::string command;
  std::string db;
  bool db_given = false;
  gpu_routing::EdgeTable edge_table{"ny_edges"};
  std::string edges_sql;
  std::string graph;              // --graph: a kept graph's name
  std::string edge_table_option;  // the last edge-table option given, if any
  bool undirected = false;
  gpu_routing::VertexTable vertex_table{"ny_vertices"};
  gpu_routing::EngineSettings engine;
  std::optional<std::chrono::milliseconds> timeout;
  std::string format = "table";
  std::size_t batch_size = 0;
  bool progress = true;
  bool verbose = false;
  std::optional<VertexSpec> from, to;
  std::vector<VertexId> ids, sources, targets;
  bool ids_given = false, sources_given = false, targets_given = false;
  std::optional<double> max_cost;
};

// ---------------------------------------------------------------------------------------------
// Parsing.

std::optional<VertexId> parse_id(const std::string& text) {
  return gpu_routing::text::parse_int64(text);
}

VertexId require_id(const std::string& option, const std::string& text) {
  const auto id = parse_id(text);
  if (!id) throw UsageFailure{option + " wants a vertex id (an integer), not \"" + text + "\""};
  return *id;
}

double require_number(const std::string& option, const std::string& text) {
  const auto value = gpu_routing::text::parse_double(text);
  if (!value || std::isnan(*value)) {
    throw UsageFailure{option + " wants a number, not \"" + text + "\""};
  }
  return *value;
}

VertexSpec parse_coordinate(const std::string& option, const std::string& text) {
  const std::size_t comma = text.find(',');
  if (comma == std::string::npos) {
    throw UsageFailure{option + " wants LON,LAT (e.g. -73.9857,40.7484), not \"" + text + "\""};
  }
  VertexSpec spec;
  spec.lon = require_number(option, text.substr(0, comma));
  spec.lat = require_number(option, text.substr(comma + 1));
  if (std::fabs(spec.lon) > 180 || std::fabs(spec.lat) > 90) {
    throw UsageFailure{option + " " + text + " is not a longitude,latitude pair"};
  }
  spec.text = text;
  return spec;
}

// "1,2,3", or "@file" / "@-" with ids separated by white space or commas.
std::vector<VertexId> parse_id_list(const std::string& option, const std::string& text) {
  std::string content = text;
  if (!text.empty() && text[0] == '@') {
    const std::string path = text.substr(1);
    std::ostringstream read;
    if (path == "-") {
      read << std::cin.rdbuf();
    } else {
      std::ifstream file(path);
      if (!file) throw UsageFailure{option + ": cannot read " + path};
      read << file.rdbuf();
    }
    content = read.str();
  }
  std::vector<VertexId> ids;
  std::string token;
  auto flush = [&] {
    if (!token.empty()) ids.push_back(require_id(option, token));
    token.clear();
  };
  for (char c : content) {
    if (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      flush();
    } else {
      token += c;
    }
  }
  flush();
  if (ids.empty()) throw UsageFailure{option + " has no vertex ids"};
  return ids;
}

std::pair<std::string, std::string> split_qualified(const std::string& name) {
  const std::size_t dot = name.find('.');
  if (dot == std::string::npos) return {"", name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

Options parse_arguments(int argc, char** argv) {
  Options options;
  if (argc < 2) throw UsageFailure{"no subcommand given (path, matrix, reachable or graphs)"};
  options.command = argv[1];
  if (options.command == "-h" || options.command == "--help" || options.command == "help") {
    options.command = "help";
    return options;
  }
  if (options.command == "--version") return options;
  if (options.command != "path" && options.command != "matrix" && options.command != "reachable" &&
      options.command != "graphs") {
    throw UsageFailure{"unknown subcommand \"" + options.command +
                       "\" (path, matrix, reachable or graphs)"};
  }
  for (int i = 2; i < argc; ++i) {
    std::string option = argv[i];
    std::optional<std::string> inline_value;
    if (const std::size_t eq = option.find('=');
        option.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = option.substr(eq + 1);
      option = option.substr(0, eq);
    }
    auto flag = [&] {
      if (inline_value) throw UsageFailure{option + " takes no value"};
    };
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) throw UsageFailure{option + " needs a value"};
      return argv[++i];
    };
    if (option == "-h" || option == "--help") {
      flag();
      options.command = "help";
      return options;
    } else if (option == "-v" || option == "--verbose") {
      flag();
      options.verbose = true;
    } else if (option == "--undirected") {
      flag();
      options.undirected = true;
    } else if (option == "--no-progress") {
      flag();
      options.progress = false;
    } else if (option == "--db") {
      options.db = value();
      options.db_given = true;
    } else if (option == "--from") {
      options.from = VertexSpec{require_id(option, value()), 0, 0, ""};
      options.from->text = std::to_string(*options.from->id);
    } else if (option == "--from-coord") {
      options.from = parse_coordinate(option, value());
    } else if (option == "--to") {
      options.to = VertexSpec{require_id(option, value()), 0, 0, ""};
      options.to->text = std::to_string(*options.to->id);
    } else if (option == "--to-coord") {
      options.to = parse_coordinate(option, value());
    } else if (option == "--ids") {
      options.ids = parse_id_list(option, value());
      options.ids_given = true;
    } else if (option == "--sources") {
      options.sources = parse_id_list(option, value());
      options.sources_given = true;
    } else if (option == "--targets") {
      options.targets = parse_id_list(option, value());
      options.targets_given = true;
    } else if (option == "--max-cost") {
      options.max_cost = require_number(option, value());
    } else if (option == "--edges-table") {
      options.edge_table_option = option;
      std::tie(options.edge_table.schema, options.edge_table.table) = split_qualified(value());
    } else if (option == "--id-column") {
      options.edge_table_option = option;
      options.edge_table.id_column = value();
    } else if (option == "--source-column") {
      options.edge_table_option = option;
      options.edge_table.source_column = value();
    } else if (option == "--target-column") {
      options.edge_table_option = option;
      options.edge_table.target_column = value();
    } else if (option == "--cost-column") {
      options.edge_table_option = option;
      options.edge_table.cost_column = value();
    } else if (option == "--reverse-cost-column") {
      options.edge_table_option = option;
      options.edge_table.reverse_cost_column = value();
    } else if (option == "--edges-sql") {
      options.edges_sql = value();
    } else if (option == "--graph") {
      options.graph = value();
      if (options.graph.empty()) throw UsageFailure{"--graph wants the name of a kept graph"};
    } else if (option == "--vertices-table") {
      std::tie(options.vertex_table.schema, options.vertex_table.table) = split_qualified(value());
    } else if (option == "--vertex-id-column") {
      options.vertex_table.id_column = value();
    } else if (option == "--lon-column") {
      options.vertex_table.lon_column = value();
    } else if (option == "--lat-column") {
      options.vertex_table.lat_column = value();
    } else if (option == "--device") {
      options.engine.device = value();
      if (options.engine.device != "auto" && options.engine.device != "gpu" &&
          options.engine.device != "cpu") {
        throw UsageFailure{"--device is auto, gpu or cpu, not \"" + options.engine.device + "\""};
      }
    } else if (option == "--sssp-algorithm") {
      options.engine.sssp_algorithm = value();
    } else if (option == "--apsp-algorithm") {
      options.engine.apsp_algorithm = value();
    } else if (option == "--threads") {
      const std::string text = value();
      const auto threads = parse_id(text);
      if (!threads || *threads < 0 || *threads > 1024) {
        throw UsageFailure{"--threads wants a count from 0 to 1024, not \"" + text + "\""};
      }
      options.engine.threads = static_cast<int>(*threads);
    } else if (option == "--max-memory") {
      options.engine.max_memory = value();
    } else if (option == "--timeout") {
      const double seconds = require_number(option, value());
      if (seconds <= 0 || seconds > 1e7) throw UsageFailure{"--timeout wants seconds above 0"};
      options.timeout = std::chrono::milliseconds(
          std::max<long long>(1, static_cast<long long>(std::llround(seconds * 1000))));
    } else if (option == "--format") {
      options.format = value();
      if (options.format != "table" && options.format != "csv" && options.format != "json" &&
          options.format != "geojson") {
        throw UsageFailure{"--format is table, csv, json or geojson, not \"" + options.format +
                           "\""};
      }
    } else if (option == "--batch-size") {
      const std::string text = value();
      const auto size = parse_id(text);
      if (!size || *size < 1) throw UsageFailure{"--batch-size wants a positive count"};
      options.batch_size = static_cast<std::size_t>(*size);
    } else {
      throw UsageFailure{"unknown option " + option};
    }
  }

  if (!options.edges_sql.empty() && !options.edge_table_option.empty()) {
    throw UsageFailure{"--edges-sql replaces the edge table; drop " + options.edge_table_option};
  }
  if (!options.graph.empty() && !options.edges_sql.empty()) {
    throw UsageFailure{"--graph and --edges-sql both say where the edges come from; give one"};
  }
  if (!options.graph.empty() && !options.edge_table_option.empty()) {
    throw UsageFailure{"--graph replaces the edge table; drop " + options.edge_table_option};
  }

  // What each subcommand needs.
  const std::string& command = options.command;
  if (command == "path") {
    if (!options.from) throw UsageFailure{"path needs --from or --from-coord"};
    if (!options.to) throw UsageFailure{"path needs --to or --to-coord"};
  } else if (command == "reachable") {
    if (!options.from) throw UsageFailure{"reachable needs --from or --from-coord"};
    if (!options.max_cost) throw UsageFailure{"reachable needs --max-cost"};
    if (options.to) throw UsageFailure{"reachable takes no --to"};
  } else if (command == "graphs") {
    if (options.from || options.to || options.ids_given || options.sources_given ||
        options.targets_given) {
      throw UsageFailure{"graphs lists the kept graphs; it takes no vertices"};
    }
    if (options.format == "geojson") {
      throw UsageFailure{"--format geojson is for path and reachable; graphs has table, csv, json"};
    }
  } else if (command == "matrix") {
    if (options.from || options.to) throw UsageFailure{"matrix takes --ids or --sources/--targets"};
    if (options.ids_given && (options.sources_given || options.targets_given)) {
      throw UsageFailure{"matrix takes either --ids or --sources with --targets"};
    }
    if (!options.ids_given && !(options.sources_given && options.targets_given)) {
      throw UsageFailure{"matrix needs --ids, or --sources and --targets"};
    }
    if (options.format == "geojson") {
      throw UsageFailure{
          "--format geojson is for path and reachable; use csv or json for a matrix"};
    }
  }
  if (command != "reachable" && options.max_cost) {
    throw UsageFailure{"--max-cost is for reachable"};
  }
  return options;
}

// ---------------------------------------------------------------------------------------------
// Output.

std::string number(double value) {
  return gpu_routing::text::format_double(value);
}

// "1 source", "2 sources": a count and its noun, singular or plural.
std::string counted(long long count, const char* singular, const char* plural) {
  return std::to_string(count) + ' ' + (count == 1 ? singular : plural);
}

// JSON has no Infinity: unreachable costs are null.
std::string json_number(double value) {
  return std::isfinite(value) ? number(value) : "null";
}

// Numbers right-aligned; the columns marked in text_columns (names, queries) left-aligned, as
// psql does. The last column is not padded.
void print_table(std::ostream& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows,
                 const std::vector<bool>& text_columns = {}) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) text += " | ";
      const std::string padding(width[c] - cells[c].size(), ' ');
      if (c < text_columns.size() && text_columns[c]) {
        text += cells[c] + (c + 1 < cells.size() ? padding : "");
      } else {
        text += padding + cells[c];
      }
    }
    out << text << '\n';
  };
  line(header);
  std::string rule;
  for (std::size_t c = 0; c < width.size(); ++c) {
    if (c > 0) rule += "-+-";
    rule += std::string(width[c], '-');
  }
  out << rule << '\n';
  for (const auto& row : rows) line(row);
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string text;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) text += ',';
    text += cells[c];
  }
  return text + '\n';
}

// A progress bar on standard error, redrawn at most ten times a second.
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  void update(const gpu_routing::MatrixProgress& progress) {
    if (!enabled_ || progress.sources_total == 0) return;
    const auto now = std::chrono::steady_clock::now();
    const bool done = progress.sources_done == progress.sources_total;
    if (!done && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    drawn_ = true;
    const double fraction =
        static_cast<double>(progress.sources_done) / static_cast<double>(progress.sources_total);
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<std::size_t>(filled), '=');
    if (filled < kWidth) bar += '>';
    bar.resize(kWidth, ' ');
    std::fprintf(stderr, "\rmatrix [%s] %3d%%  %zu/%zu sources  %.1f s", bar.c_str(),
                 static_cast<int>(fraction * 100), progress.sources_done, progress.sources_total,
                 progress.elapsed_seconds);
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_ && drawn_) std::fputc('\n', stderr);
    drawn_ = false;
  }

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_;
};

// ---------------------------------------------------------------------------------------------
// Subcommands.

VertexId resolve(gpu_routing::Router& router, const Options& options, const VertexSpec& spec,
                 const char* role) {
  if (spec.id) return *spec.id;
  const auto nearest = router.nearest_vertex(options.vertex_table, spec.lon, spec.lat);
  if (!nearest) throw UsageFailure{"the vertex table " + options.vertex_table.table + " is empty"};
  if (options.verbose) {
    std::fprintf(stderr, "gpu-route: %s %s is vertex %lld at %s,%s (%.0f m away)\n", role,
                 spec.text.c_str(), static_cast<long long>(nearest->vertex.id),
                 number(nearest->vertex.lon).c_str(), number(nearest->vertex.lat).c_str(),
                 nearest->distance_m);
  }
  return nearest->vertex.id;
}

std::vector<gpu_routing::Location> require_locations(gpu_routing::Router& router,
                                                     const Options& options,
                                                     const std::vector<VertexId>& ids) {
  const auto found = router.locations(options.vertex_table, ids);
  std::vector<gpu_routing::Location> locations;
  locations.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!found[i]) {
      throw UsageFailure{"vertex " + std::to_string(ids[i]) + " has no coordinates in " +
                         options.vertex_table.table + " (see --vertices-table)"};
    }
    locations.push_back(*found[i]);
  }
  return locations;
}

std::string coordinate_json(const gpu_routing::Location& location) {
  return "[" + number(location.lon) + "," + number(location.lat) + "]";
}

int run_path(gpu_routing::Router& router, const Options& options) {
  const VertexId from = resolve(router, options, *options.from, "--from-coord");
  const VertexId to = resolve(router, options, *options.to, "--to-coord");
  const auto path = router.path(from, to);
  if (!path) {
    std::string why = from == to ? " (start and end are the same vertex)" : "";
    throw NoRoute{"no route from " + std::to_string(from) + " to " + std::to_string(to) + why};
  }
  std::ostream& out = std::cout;
  if (options.format == "table" || options.format == "csv") {
    const std::vector<std::string> header{"seq", "node", "edge", "cost", "agg_cost"};
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < path->steps.size(); ++i) {
      const auto& step = path->steps[i];
      rows.push_back({std::to_string(i + 1), std::to_string(step.node), std::to_string(step.edge),
                      number(step.cost), number(step.agg_cost)});
    }
    if (options.format == "table") {
      print_table(out, header, rows);
      out << "(" << counted(static_cast<long long>(path->steps.size()) - 1, "edge", "edges")
          << ", cost " << number(path->cost) << ")\n";
    } else {
      out << csv_line(header);
      for (const auto& row : rows) out << csv_line(row);
    }
  } else if (options.format == "json") {
    out << "{\"from\":" << from << ",\"to\":" << to << ",\"cost\":" << number(path->cost)
        << ",\"steps\":[";
    for (std::size_t i = 0; i < path->steps.size(); ++i) {
      const auto& step = path->steps[i];
      out << (i ? "," : "") << "{\"seq\":" << i + 1 << ",\"node\":" << step.node
          << ",\"edge\":" << step.edge << ",\"cost\":" << number(step.cost)
          << ",\"agg_cost\":" << number(step.agg_cost) << "}";
    }
    out << "]}\n";
  } else {  // geojson: one Feature, a LineString through the vertices of the route
    const auto locations = require_locations(router, options, path->nodes());
    out << "{\"type\":\"Feature\",\"geometry\":{\"type\":\"LineString\",\"coordinates\":[";
    for (std::size_t i = 0; i < locations.size(); ++i) {
      out << (i ? "," : "") << coordinate_json(locations[i]);
    }
    out << "]},\"properties\":{\"from\":" << from << ",\"to\":" << to
        << ",\"cost\":" << number(path->cost) << ",\"edge_count\":" << path->steps.size() - 1
        << ",\"vertices\":[";
    for (std::size_t i = 0; i < path->steps.size(); ++i) {
      out << (i ? "," : "") << path->steps[i].node;
    }
    out << "],\"edges\":[";
    const auto edges = path->edges();
    for (std::size_t i = 0; i < edges.size(); ++i) out << (i ? "," : "") << edges[i];
    out << "]}}\n";
  }
  return kSuccess;
}

int run_reachable(gpu_routing::Router& router, const Options& options) {
  const VertexId from = resolve(router, options, *options.from, "--from-coord");
  const auto reached = router.reachable(from, *options.max_cost);
  if (reached.empty()) {
    throw NoRoute{"nothing reachable from " + std::to_string(from) +
                  (*options.max_cost < 0 ? " (max cost is negative)" : " (not in the graph)")};
  }
  auto optional_id = [](const std::optional<std::int64_t>& id, const char* none) {
    return id ? std::to_string(*id) : std::string(none);
  };
  std::ostream& out = std::cout;
  if (options.format == "table" || options.format == "csv") {
    const std::vector<std::string> header{"node", "distance", "predecessor", "edge"};
    std::vector<std::vector<std::string>> rows;
    rows.reserve(reached.size());
    for (const auto& r : reached) {
      rows.push_back({std::to_string(r.node), number(r.distance), optional_id(r.predecessor, ""),
                      optional_id(r.edge, "")});
    }
    if (options.format == "table") {
      print_table(out, header, rows);
      out << "(" << reached.size() << " vertices within " << number(*options.max_cost) << ")\n";
    } else {
      out << csv_line(header);
      for (const auto& row : rows) out << csv_line(row);
    }
  } else if (options.format == "json") {
    out << "{\"from\":" << from << ",\"max_cost\":" << number(*options.max_cost)
        << ",\"reached\":[";
    for (std::size_t i = 0; i < reached.size(); ++i) {
      const auto& r = reached[i];
      out << (i ? "," : "") << "{\"node\":" << r.node << ",\"distance\":" << number(r.distance)
          << ",\"predecessor\":" << optional_id(r.predecessor, "null")
          << ",\"edge\":" << optional_id(r.edge, "null") << "}";
    }
    out << "]}\n";
  } else {  // geojson: a FeatureCollection of Points
    std::vector<VertexId> ids;
    ids.reserve(reached.size());
    for (const auto& r : reached) ids.push_back(r.node);
    const auto locations = require_locations(router, options, ids);
    out << "{\"type\":\"FeatureCollection\",\"features\":[";
    for (std::size_t i = 0; i < reached.size(); ++i) {
      const auto& r = reached[i];
      out << (i ? ",\n" : "\n") << "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\","
          << "\"coordinates\":" << coordinate_json(locations[i])
          << "},\"properties\":{\"node\":" << r.node << ",\"distance\":" << number(r.distance)
          << ",\"predecessor\":" << optional_id(r.predecessor, "null") << "}}";
    }
    out << "\n]}\n";
  }
  return kSuccess;
}

int run_matrix(gpu_routing::Router& router, const Options& options) {
  const std::vector<VertexId>& sources = options.ids_given ? options.ids : options.sources;
  const std::vector<VertexId>& targets = options.ids_given ? options.ids : options.targets;
  // The bar shares a terminal with the rows only for the grid, which is printed after it.
  ProgressBar bar(options.progress && isatty(STDERR_FILENO) &&
                  (options.format == "table" || !isatty(STDOUT_FILENO)));
  gpu_routing::MatrixOptions call;
  call.batch_sources = options.batch_size;
  call.on_progress = [&](const gpu_routing::MatrixProgress& progress) { bar.update(progress); };
  std::ostream& out = std::cout;

  if (options.format == "table") {  // a grid: one row per source, one column per target
    const gpu_routing::CostMatrix matrix = router.cost_matrix(sources, targets, call);
    bar.finish();
    std::vector<std::string> header{"source \\ target"};
    for (VertexId target : targets) header.push_back(std::to_string(target));
    std::vector<std::vector<std::string>> rows;
    rows.reserve(sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
      std::vector<std::string> row{std::to_string(sources[i])};
      for (std::size_t j = 0; j < targets.size(); ++j) {
        const double cost = matrix.at(i, j);
        row.push_back(std::isfinite(cost) ? number(cost) : "-");
      }
      rows.push_back(std::move(row));
    }
    print_table(out, header, rows);
    return kSuccess;
  }

  // csv and json are written batch by batch: the whole matrix is never held.
  if (options.format == "csv") {
    out << "source,target,cost\n";
  } else {
    out << "{\"sources\":[";
    for (std::size_t i = 0; i < sources.size(); ++i) out << (i ? "," : "") << sources[i];
    out << "],\"targets\":[";
    for (std::size_t j = 0; j < targets.size(); ++j) out << (j ? "," : "") << targets[j];
    out << "],\"costs\":[";
  }
  router.cost_matrix_batches(
      sources, targets,
      [&](const gpu_routing::CostMatrixBatch& batch) {
        std::string text;
        for (std::size_t r = 0; r < batch.sources.size(); ++r) {
          if (options.format == "csv") {
            // Unreachable pairs have an empty cost.
            for (std::size_t j = 0; j < targets.size(); ++j) {
              const double cost = batch.at(r, j);
              text += std::to_string(batch.sources[r]) + ',' + std::to_string(targets[j]) + ',' +
                      (std::isfinite(cost) ? number(cost) : std::string()) + '\n';
            }
          } else {
            text += (batch.first_source + r ? ",\n[" : "\n[");
            for (std::size_t j = 0; j < targets.size(); ++j) {
              text += (j ? "," : "") + json_number(batch.at(r, j));
            }
            text += ']';
          }
        }
        out << text;
      },
      call);
  bar.finish();
  if (options.format == "json") out << "\n]}\n";
  return kSuccess;
}

int run_graphs(gpu_routing::Router& router, const Options& options) {
  const auto graphs = router.kept_graphs();
  std::ostream& out = std::cout;
  if (options.format == "table") {
    if (graphs.empty()) {
      out << "(no kept graphs in this database: SELECT gpu_graph_create(name, edges_sql) makes "
             "one)\n";
      return kSuccess;
    }
    // The short columns; csv and json add owner, refresh, forms (the road index) and note.
    const std::vector<std::string> header{"name", "state", "vertices", "edges", "edges_sql"};
    std::vector<std::vector<std::string>> rows;
    for (const auto& graph : graphs) {
      rows.push_back({graph.name, graph.state, std::to_string(graph.vertices),
                      std::to_string(graph.edges),
                      graph.edges_sql.empty() ? "(hidden)" : graph.edges_sql});
    }
    print_table(out, header, rows, {true, true, false, false, true});
    return kSuccess;
  }
  using gpu_routing::text::csv_field;
  using gpu_routing::text::json_string;
  if (options.format == "csv") {
    out << "name,owner,state,refresh,vertices,edges,edges_sql,forms,note\n";
    for (const auto& graph : graphs) {
      out << csv_line({csv_field(graph.name), csv_field(graph.owner), csv_field(graph.state),
                       csv_field(graph.refresh), std::to_string(graph.vertices),
                       std::to_string(graph.edges), csv_field(graph.edges_sql),
                       csv_field(graph.forms), csv_field(graph.note)});
    }
    return kSuccess;
  }
  out << "[";
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    const auto& graph = graphs[i];
    out << (i ? ",\n" : "\n") << "{\"name\":" << json_string(graph.name)
        << ",\"owner\":" << json_string(graph.owner) << ",\"state\":" << json_string(graph.state)
        << ",\"refresh\":" << json_string(graph.refresh) << ",\"vertices\":" << graph.vertices
        << ",\"edges\":" << graph.edges << ",\"edges_sql\":" << json_string(graph.edges_sql)
        << ",\"forms\":" << json_string(graph.forms) << ",\"note\":" << json_string(graph.note)
        << "}";
  }
  out << (graphs.empty() ? "]\n" : "\n]\n");
  return kSuccess;
}

// -v: where the last call ran, and which kept graph served it. When none did although the
// database keeps graphs, names them (the text of the call's query matched none of them); when it
// keeps none, says nothing more: the load time above shows the read.
void print_last_run(gpu_routing::Router& router) {
  const auto run = router.last_run();
  if (!run) return;
  std::fprintf(
      stderr,
      "gpu-route: %s on %s (%s): %s, %s, %s; load %.1f ms, compute %.1f ms, total %.1f ms\n",
      run->function.c_str(), run->device.c_str(), run->algorithm.c_str(),
      counted(run->vertices, "vertex", "vertices").c_str(),
      counted(run->edges, "edge", "edges").c_str(),
      counted(run->sources, "source", "sources").c_str(), run->load_ms, run->compute_ms,
      run->total_ms);
  if (!run->graph.empty()) {
    const std::string notes = run->notes.empty() ? "" : ": " + run->notes;
    std::fprintf(stderr, "gpu-route: kept graph %s served the call%s\n", run->graph.c_str(),
                 notes.c_str());
    return;
  }
  // A kept graph named or matched, but the call had to read its query itself.
  if (run->notes.rfind("read privately", 0) == 0) {
    std::fprintf(stderr, "gpu-route: no kept graph served the call: %s\n", run->notes.c_str());
    return;
  }
  std::string names;
  for (const auto& graph : router.kept_graphs()) names += (names.empty() ? "" : ", ") + graph.name;
  if (names.empty()) return;
  std::fprintf(stderr,
               "gpu-route: no kept graph served the call (its edges query is none of theirs); "
               "this database keeps %s: --graph NAME uses one\n",
               names.c_str());
}

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "gpu-route: %s\n", gpu_routing::text::one_line(message).c_str());
  return code;
}

std::string server_message(const gpu_routing::Error& error) {
  std::string message = error.what();
  if (!error.sqlstate().empty()) message = "[" + error.sqlstate() + "] " + message;
  if (!error.hint().empty()) message += " (hint: " + error.hint() + ")";
  return message;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  Options options;
  try {
    options = parse_arguments(argc, argv);
  } catch (const UsageFailure& failure) {
    return fail(kUsageOrConnection, failure.message + "; see gpu-route --help");
  }
  if (options.command == "help") {
    std::cout << kHelp;
    return kSuccess;
  }
  if (options.command == "--version") {
    std::cout << "gpu-route " GPU_ROUTE_VERSION "\n";
    return kSuccess;
  }

  try {
    gpu_routing::RouterOptions router_options;
    router_options.directed = !options.undirected;
    router_options.engine = options.engine;
    router_options.timeout = options.timeout;
    router_options.application_name = "gpu-route";
    gpu_routing::EdgeSource edges =
        !options.graph.empty()       ? gpu_routing::EdgeSource::from_graph(options.graph)
        : !options.edges_sql.empty() ? gpu_routing::EdgeSource::from_query(options.edges_sql)
                                     : gpu_routing::EdgeSource::from_table(options.edge_table);
    gpu_routing::Router router(options.db, std::move(edges), router_options);
    int code = kSuccess;
    if (options.command == "path") {
      code = run_path(router, options);
    } else if (options.command == "matrix") {
      code = run_matrix(router, options);
    } else if (options.command == "graphs") {
      code = run_graphs(router, options);
    } else {
      code = run_reachable(router, options);
    }
    std::cout.flush();
    if (!std::cout) return fail(kUsageOrConnection, "cannot write the output");
    if (options.verbose && options.command != "graphs") print_last_run(router);
    return code;
  } catch (const UsageFailure& failure) {
    return fail(kUsageOrConnection, failure.message);
  } catch (const NoRoute& no_route) {
    return fail(kNoRoute, no_route.message);
  } catch (const gpu_routing::UsageError& error) {
    return fail(kUsageOrConnection, error.what());
  } catch (const gpu_routing::ConnectionError& error) {
    std::string message = error.what();
    if (!error.hint().empty()) message += " (hint: " + error.hint() + ")";
    return fail(kUsageOrConnection, message);
  } catch (const gpu_routing::TimeoutError& error) {
    return fail(kServerError, "timed out: " + server_message(error));
  } catch (const gpu_routing::Error& error) {
    return fail(kServerError, "server error " + server_message(error));
  } catch (const std::exception& error) {
    return fail(kServerError, std::string("unexpected failure: ") + error.what());
  }
}
