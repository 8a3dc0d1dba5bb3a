// The Router against the test database: its results equal the SQL functions' rows (queried here
// directly through libpqxx), and its failures carry the server's message and SQLSTATE.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>
#include <tuple>

#include "gpu_routing/router.hpp"
#include "test_support.hpp"
#include "text.hpp"

namespace gpu_routing {
namespace {

using testing::kRomeEdgesSql;
using testing::kSampleEdgesSql;
using testing::test_dsn;

EdgeSource sample_table() {
  EdgeTable table{"sample_edges"};
  table.reverse_cost_column = "reverse_cost";
  return EdgeSource::from_table(table);
}

EdgeSource rome_table() {
  return EdgeSource::from_table(EdgeTable{"rome_edges"});
}

RouterOptions undirected() {
  RouterOptions options;
  options.directed = false;
  return options;
}

std::string literal(const std::vector<VertexId>& ids) {
  return text::bigint_array_literal(ids);
}

double as_double(const pqxx::field& field) {
  return *text::parse_double(std::string_view(field.c_str(), field.size()));
}

class RouterTest : public testing::DatabaseTest {
 protected:
  template <typename... Args>
  pqxx::result sql_params(const std::string& query, Args&&... args) {
    pqxx::nontransaction tx(*reference_);
    return tx.exec_params(query, std::forward<Args>(args)...);
  }

  // gpu_path one-to-one rows as PathSteps.
  std::vector<PathStep> sql_path(const std::string& edges, VertexId from, VertexId to,
                                 bool directed) {
    std::vector<PathStep> steps;
    for (const auto& row : sql_params("SELECT node, edge, cost, agg_cost FROM gpu_path($1::text, "
                                      "$2::bigint, $3::bigint, $4::boolean) ORDER BY seq",
                                      edges, from, to, directed)) {
      steps.push_back(PathStep{row[0].as<VertexId>(), row[1].as<EdgeId>(), as_double(row[2]),
                               as_double(row[3])});
    }
    return steps;
  }
};

void expect_same_steps(const std::vector<PathStep>& ours, const std::vector<PathStep>& theirs) {
  ASSERT_EQ(ours.size(), theirs.size());
  for (std::size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].node, theirs[i].node) << "step " << i;
    EXPECT_EQ(ours[i].edge, theirs[i].edge) << "step " << i;
    EXPECT_EQ(ours[i].cost, theirs[i].cost) << "step " << i;
    EXPECT_EQ(ours[i].agg_cost, theirs[i].agg_cost) << "step " << i;
  }
}

// ---------------------------------------------------------------------------------------------
// Results equal the SQL functions' rows.

TEST_F(RouterTest, PathEqualsGpuPathRows) {
  Router router(test_dsn(), sample_table());
  const auto path = router.path(6, 10);
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(path->start, 6);
  EXPECT_EQ(path->end, 10);
  EXPECT_EQ(path->cost, 5);  // pgRouting's documented answer
  EXPECT_EQ(path->nodes(), (std::vector<VertexId>{6, 7, 11, 16, 15, 10}));
  EXPECT_EQ(path->edges(), (std::vector<EdgeId>{4, 8, 9, 16, 3}));
  expect_same_steps(path->steps, sql_path(kSampleEdgesSql, 6, 10, true));

  Router rome(test_dsn(), rome_table());
  for (auto [from, to] :
       std::vector<std::pair<VertexId, VertexId>>{{1, 3353}, {500, 7}, {1000, 2000}, {3000, 700}}) {
    const auto route = rome.path(from, to);
    ASSERT_TRUE(route.has_value()) << from << " -> " << to;
    expect_same_steps(route->steps, sql_path(kRomeEdgesSql, from, to, true));
    EXPECT_EQ(route->cost, route->steps.back().agg_cost);
  }
}

TEST_F(RouterTest, UndirectedPathEqualsGpuPathRows) {
  Router router(test_dsn(), sample_table(), undirected());
  EXPECT_FALSE(router.directed());
  const auto path = router.path(6, 10);
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(path->cost, 1);
  expect_same_steps(path->steps, sql_path(kSampleEdgesSql, 6, 10, false));
}

TEST_F(RouterTest, NoPathIsNullopt) {
  Router router(test_dsn(), sample_table());
  EXPECT_FALSE(router.path(6, 2).has_value());    // another component
  EXPECT_FALSE(router.path(6, 999).has_value());  // not in the graph
  EXPECT_FALSE(router.path(6, 6).has_value());    // gpu_path's convention
}

TEST_F(RouterTest, EdgesQueryGivesTheSameAnswersAsTheTable) {
  Router from_table(test_dsn(), sample_table());
  Router from_query(test_dsn(), EdgeSource::from_query(kSampleEdgesSql));
  EXPECT_EQ(from_query.edges_sql(), kSampleEdgesSql);
  expect_same_steps(from_table.path(1, 17)->steps, from_query.path(1, 17)->steps);
}

TEST_F(RouterTest, PathsEqualManyToManyRows) {
  Router router(test_dsn(), sample_table(), undirected());
  const std::vector<VertexId> froms{6, 1, 6};
  const std::vector<VertexId> tos{10, 17, 999};
  const auto paths = router.paths(froms, tos);
  const auto rows = sql_params(
      "SELECT start_vid, end_vid, node, edge, cost, agg_cost, path_seq FROM gpu_path($1, "
      "$2::bigint[], $3::bigint[], false) ORDER BY seq",
      std::string(kSampleEdgesSql), literal(froms), literal(tos));
  std::size_t row_index = 0;
  for (const Path& path : paths) {
    for (std::size_t i = 0; i < path.steps.size(); ++i, ++row_index) {
      ASSERT_LT(row_index, rows.size());
      const auto& row = rows[row_index];
      EXPECT_EQ(row[0].as<VertexId>(), path.start);
      EXPECT_EQ(row[1].as<VertexId>(), path.end);
      EXPECT_EQ(row[6].as<int>(), static_cast<int>(i + 1));
      EXPECT_EQ(row[2].as<VertexId>(), path.steps[i].node);
      EXPECT_EQ(row[3].as<EdgeId>(), path.steps[i].edge);
      EXPECT_EQ(as_double(row[4]), path.steps[i].cost);
      EXPECT_EQ(as_double(row[5]), path.steps[i].agg_cost);
    }
  }
  EXPECT_EQ(row_index, rows.size());
  // 1 -> 10, 1 -> 17, 6 -> 10, 6 -> 17: ordered by start, then end; 999 has no path.
  ASSERT_EQ(paths.size(), 4u);
  EXPECT_EQ(std::make_pair(paths[0].start, paths[0].end),
            std::make_pair(VertexId{1}, VertexId{10}));
  EXPECT_EQ(std::make_pair(paths[3].start, paths[3].end),
            std::make_pair(VertexId{6}, VertexId{17}));
  EXPECT_TRUE(router.paths({}, {1}).empty());
}

// Every finite pair of gpu_apsp's rows is in the matrix; every other off-diagonal cell is
// unreachable; the diagonal is 0.
void expect_matrix_equals_rows(const CostMatrix& matrix, const pqxx::result& rows) {
  std::map<std::pair<VertexId, VertexId>, double> expected;
  for (const auto& row : rows) {
    expected[{row[0].as<VertexId>(), row[1].as<VertexId>()}] = as_double(row[2]);
  }
  for (std::size_t i = 0; i < matrix.sources.size(); ++i) {
    for (std::size_t j = 0; j < matrix.targets.size(); ++j) {
      const VertexId s = matrix.sources[i], t = matrix.targets[j];
      const auto it = expected.find({s, t});
      if (s == t) {
        EXPECT_EQ(matrix.at(i, j), 0) << s;
      } else if (it == expected.end()) {
        EXPECT_EQ(matrix.at(i, j), kUnreachable) << s << " -> " << t;
      } else {
        EXPECT_EQ(matrix.at(i, j), it->second) << s << " -> " << t;
      }
    }
  }
}

TEST_F(RouterTest, CostMatrixEqualsGpuApspRows) {
  Router router(test_dsn(), rome_table());
  std::vector<VertexId> ids;
  for (VertexId v = 1; v <= 3353; v += 113) ids.push_back(v);
  const CostMatrix matrix = router.cost_matrix(ids);
  ASSERT_EQ(matrix.costs.size(), ids.size() * ids.size());
  const auto rows = sql_params("SELECT * FROM gpu_apsp($1, $2::bigint[], $2::bigint[])",
                               std::string(kRomeEdgesSql), literal(ids));
  EXPECT_GT(rows.size(), ids.size());
  expect_matrix_equals_rows(matrix, rows);

  // Batches of 7 sources: the same matrix, progress reported after every batch.
  MatrixOptions batched;
  batched.batch_sources = 7;
  std::vector<MatrixProgress> reports;
  batched.on_progress = [&](const MatrixProgress& progress) { reports.push_back(progress); };
  const CostMatrix in_batches = router.cost_matrix(ids, batched);
  EXPECT_EQ(in_batches.costs, matrix.costs);
  const std::size_t batches = (ids.size() + 6) / 7;
  ASSERT_EQ(reports.size(), batches + 1);  // once before the first batch, once after each
  EXPECT_EQ(reports.front().sources_done, 0u);
  for (std::size_t i = 1; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].batches_done, i);
    EXPECT_EQ(reports[i].batches_total, batches);
    EXPECT_GE(reports[i].sources_done, reports[i - 1].sources_done);
  }
  EXPECT_EQ(reports.back().sources_done, ids.size());
}

TEST_F(RouterTest, CostMatrixRowsAndColumnsFollowTheIdsAsGiven) {
  Router router(test_dsn(), sample_table());
  const std::vector<VertexId> sources{6, 1, 6, 999};
  const std::vector<VertexId> targets{10, 17, 6, 10};
  const CostMatrix matrix = router.cost_matrix(sources, targets);
  const auto rows = sql_params("SELECT * FROM gpu_apsp($1, $2::bigint[], $3::bigint[])",
                               std::string(kSampleEdgesSql), literal(sources), literal(targets));
  expect_matrix_equals_rows(matrix, rows);
  EXPECT_EQ(matrix.at(0, 0), 5);
  EXPECT_EQ(matrix.at(2, 3), 5);             // repeated source and target
  EXPECT_EQ(matrix.at(3, 0), kUnreachable);  // not in the graph
  EXPECT_EQ(matrix.at(3, 2), kUnreachable);

  // Batches of one source, delivered in order, with the same rows.
  MatrixOptions one_by_one;
  one_by_one.batch_sources = 1;
  std::size_t next_row = 0;
  router.cost_matrix_batches(
      sources, targets,
      [&](const CostMatrixBatch& batch) {
        ASSERT_EQ(batch.first_source, next_row);
        ASSERT_EQ(batch.sources.size(), 1u);
        for (std::size_t j = 0; j < targets.size(); ++j) {
          EXPECT_EQ(batch.at(0, j), matrix.at(next_row, j));
        }
        ++next_row;
      },
      one_by_one);
  EXPECT_EQ(next_row, sources.size());
  EXPECT_TRUE(router.cost_matrix(std::vector<VertexId>{}).costs.empty());
}

// gpu_apsp_array gives a row per distinct source in the graph only: sources repeated, absent or
// in another component, targets likewise, fill every cell as gpu_apsp's rows say, in batches of
// every size (a batch of absent sources only included), directed and undirected.
TEST_F(RouterTest, CostMatrixWithRepeatedAndAbsentIdsEqualsGpuApspRows) {
  const std::vector<VertexId> sources{2, 6, 999, 1, 6, 14, 999, 4, 1000, 3};
  const std::vector<VertexId> targets{6, 999, 2, 17, 6, 1, 999, 4, 3, 1000, 16};
  for (const bool directed : {true, false}) {
    RouterOptions options;
    options.directed = directed;
    Router router(test_dsn(), sample_table(), options);
    const auto rows = sql_params(
        "SELECT start_vid, end_vid, agg_cost FROM gpu_apsp($1, $2::bigint[], $3::bigint[], $4)",
        std::string(kSampleEdgesSql), literal(sources), literal(targets), directed);
    const CostMatrix matrix = router.cost_matrix(sources, targets);
    ASSERT_EQ(matrix.costs.size(), sources.size() * targets.size());
    EXPECT_EQ(matrix.sources, sources);
    EXPECT_EQ(matrix.targets, targets);
    expect_matrix_equals_rows(matrix, rows);

    std::size_t finite = 0, unreachable = 0;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      for (std::size_t j = 0; j < targets.size(); ++j) {
        if (sources[i] == targets[j]) continue;
        ++(std::isinf(matrix.at(i, j)) ? unreachable : finite);
      }
    }
    EXPECT_GT(finite, 10u) << "directed " << directed;
    EXPECT_GT(unreachable, 10u) << "directed " << directed;
    EXPECT_EQ(matrix.at(2, 1), 0);  // 999 is not in the graph, and 0 from itself
    EXPECT_EQ(matrix.at(6, 6), 0);
    EXPECT_EQ(matrix.at(2, 0), kUnreachable);
    EXPECT_EQ(matrix.at(1, 4), 0);  // 6 -> 6, repeated on both sides
    EXPECT_EQ(matrix.at(4, 0), 0);
    EXPECT_EQ(matrix.at(1, 3), matrix.at(4, 3));

    // Every batch size gives the same cells; batches of two put 999 and 1000 alone in one.
    for (const std::size_t batch_sources : {1, 2, 3, 7}) {
      MatrixOptions call;
      call.batch_sources = batch_sources;
      const CostMatrix batched = router.cost_matrix(sources, targets, call);
      ASSERT_EQ(batched.costs.size(), matrix.costs.size());
      for (std::size_t k = 0; k < matrix.costs.size(); ++k) {
        EXPECT_EQ(batched.costs[k], matrix.costs[k])
            << "batches of " << batch_sources << ", cell " << k;
      }
    }
  }

  // No source in the graph: no row comes back, the matrix is still whole.
  Router router(test_dsn(), sample_table());
  const CostMatrix none = router.cost_matrix({999, 1000, 999}, {1, 999, 1000});
  EXPECT_EQ(none.costs, (std::vector<double>{kUnreachable, 0, kUnreachable, kUnreachable,
                                             kUnreachable, 0, kUnreachable, 0, kUnreachable}));
}

// A database still on gpu_routing 0.1.0 has no gpu_apsp_array: the Router connects all the same
// and reads matrices from gpu_apsp's rows, cell for cell what the arrays give on 0.2.0 (repeated,
// absent and unreachable ids, directed and undirected, batches of every size).
TEST_F(RouterTest, CostMatrixOnADatabaseStillOn010ComesFromRows) {
  const std::string db = "gpu_routing_client_v010";
  sql("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
  sql("CREATE DATABASE " + db);
  struct DropAtEnd {
    pqxx::connection& connection;
    std::string db;
    ~DropAtEnd() {
      try {
        pqxx::nontransaction tx(connection);
        tx.exec("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
      } catch (...) {
      }
    }
  } drop_at_end{*reference_, db};
  std::string values;
  for (const auto& row : sql("SELECT id, source, target, cost, reverse_cost FROM sample_edges")) {
    values += std::string(values.empty() ? "" : ", ") + "(" + row[0].c_str() + ", " +
              row[1].c_str() + ", " + row[2].c_str() + ", " + row[3].c_str() + ", " +
              row[4].c_str() + ")";
  }
  {
    pqxx::connection old(test_dsn() + " dbname=" + db);
    pqxx::nontransaction tx(old);
    tx.exec("CREATE EXTENSION gpu_routing VERSION '0.1.0'");
    tx.exec(
        "CREATE TABLE sample_edges (id bigint, source bigint, target bigint, cost float8, "
        "reverse_cost float8)");
    tx.exec("INSERT INTO sample_edges VALUES " + values);
    ASSERT_TRUE(tx.exec1("SELECT to_regproc('gpu_apsp_array') IS NULL")[0].as<bool>());
  }
  const std::vector<VertexId> sources{2, 6, 999, 1, 6, 14, 999, 4, 1000, 3};
  const std::vector<VertexId> targets{6, 999, 2, 17, 6, 1, 999, 4, 3, 1000, 16};
  for (const bool directed : {true, false}) {
    RouterOptions options;
    options.directed = directed;
    Router on_rows(test_dsn() + " dbname=" + db, sample_table(), options);
    Router on_arrays(test_dsn(), sample_table(), options);
    const CostMatrix want = on_arrays.cost_matrix(sources, targets);
    for (const std::size_t batch_sources : {0, 1, 3}) {
      MatrixOptions call;
      call.batch_sources = batch_sources;
      const CostMatrix got = on_rows.cost_matrix(sources, targets, call);
      ASSERT_EQ(got.costs.size(), want.costs.size());
      for (std::size_t i = 0; i < sources.size(); ++i)
        for (std::size_t j = 0; j < targets.size(); ++j)
          EXPECT_EQ(got.at(i, j), want.at(i, j))
              << "directed " << directed << ", batch " << batch_sources << ", " << sources[i]
              << " -> " << targets[j];
    }
    EXPECT_EQ(on_rows.last_run()->function, "gpu_apsp");
    // 0.1.0 has no kept graphs: no gpu_graphs(), no gpu_routing_last_run().graph.
    EXPECT_EQ(on_rows.last_run()->graph, "");
    EXPECT_TRUE(on_rows.kept_graphs().empty());
  }
}

TEST_F(RouterTest, ReachableEqualsGpuSsspRowsWithinTheBound) {
  Router router(test_dsn(), rome_table());
  for (double bound : {0.0, 1500.0, 5000.0, kUnreachable}) {
    const auto reached = router.reachable(1000, bound);
    const auto rows = sql_params(
        "SELECT node, distance, predecessor, edge FROM gpu_sssp($1, 1000::bigint) WHERE "
        "distance <= $2::float8 ORDER BY node",
        std::string(kRomeEdgesSql), text::format_double(bound));
    ASSERT_EQ(reached.size(), rows.size()) << bound;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(reached[i].node, rows[i][0].as<VertexId>());
      EXPECT_EQ(reached[i].distance, as_double(rows[i][1]));
      EXPECT_LE(reached[i].distance, bound);
      EXPECT_EQ(reached[i].predecessor.has_value(), !rows[i][2].is_null());
      if (!rows[i][2].is_null()) {
        EXPECT_EQ(*reached[i].predecessor, rows[i][2].as<VertexId>());
        EXPECT_EQ(*reached[i].edge, rows[i][3].as<EdgeId>());
      }
    }
  }
  const auto all = router.reachable(1000, kUnreachable);
  EXPECT_EQ(all.size(), sql("SELECT count(*) FROM gpu_sssp('" + std::string(kRomeEdgesSql) +
                            "', 1000::bigint)")[0][0]
                            .as<std::size_t>());
  const auto only_source = router.reachable(1000, 0);
  ASSERT_EQ(only_source.size(), 1u);
  EXPECT_FALSE(only_source[0].predecessor.has_value());
  EXPECT_TRUE(router.reachable(999999, kUnreachable).empty());
  EXPECT_THROW(router.reachable(1, std::nan("")), UsageError);
}

TEST_F(RouterTest, LastRunDescribesTheLastCall) {
  RouterOptions options;
  options.engine.device = "cpu";
  options.engine.threads = 1;
  Router router(test_dsn(), sample_table(), options);
  EXPECT_FALSE(router.last_run().has_value());
  ASSERT_TRUE(router.path(6, 10).has_value());
  const auto run = router.last_run();
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->function, "gpu_path");
  EXPECT_EQ(run->vertices, 17);
  EXPECT_NE(run->device.find("CPU"), std::string::npos) << run->device;
}

// Names that need quoting, for both the edge and the vertex tables.
TEST_F(RouterTest, TableAndColumnNamesAreQuoted) {
  const std::string edges_name = testing::unique_name("Client \"Edges\"");
  const std::string vertices_name = testing::unique_name("Client Vertices");
  const std::string quoted_edges = reference_->quote_name(edges_name);
  const std::string quoted_vertices = reference_->quote_name(vertices_name);
  testing::ScratchTable edges(*reference_, quoted_edges,
                              "CREATE TABLE " + quoted_edges +
                                  " AS SELECT id AS \"Edge Id\", source AS \"From\", target AS "
                                  "\"to node\", cost AS \"Cost;--\", reverse_cost AS \"Back\" FROM "
                                  "sample_edges");
  testing::ScratchTable vertices(
      *reference_, quoted_vertices,
      "CREATE TABLE " + quoted_vertices +
          " AS SELECT DISTINCT ON (id) id AS \"Node\", x AS \"X\", y AS \"Y\" FROM ("
          "SELECT source AS id, x1 AS x, y1 AS y FROM sample_edges UNION ALL "
          "SELECT target, x2, y2 FROM sample_edges) v ORDER BY id");
  sql("CREATE INDEX ON " + quoted_vertices + " USING gist (point(\"X\", \"Y\"))");

  EdgeTable table(edges_name, "public");
  table.id_column = "Edge Id";
  table.source_column = "From";
  table.target_column = "to node";
  table.cost_column = "Cost;--";
  table.reverse_cost_column = "Back";
  Router router(test_dsn(), EdgeSource::from_table(table));
  const auto path = router.path(6, 10);
  ASSERT_TRUE(path.has_value()) << router.edges_sql();
  expect_same_steps(path->steps, sql_path(kSampleEdgesSql, 6, 10, true));

  VertexTable coordinates(vertices_name);
  coordinates.id_column = "Node";
  coordinates.lon_column = "X";
  coordinates.lat_column = "Y";
  const auto nearest = router.nearest_vertex(coordinates, 3.1, 1.9);
  ASSERT_TRUE(nearest.has_value());
  EXPECT_EQ(nearest->vertex.id, 11);  // vertex 11 is at (3, 2)
  EXPECT_EQ(nearest->vertex.lon, 3);
  EXPECT_EQ(nearest->vertex.lat, 2);
  EXPECT_GT(nearest->distance_m, 10000);  // 0.14 degrees
  const auto found = router.locations(coordinates, {10, 999, 10, 6});
  ASSERT_EQ(found.size(), 4u);
  ASSERT_TRUE(found[0] && found[2] && found[3]);
  EXPECT_FALSE(found[1].has_value());
  EXPECT_EQ(found[0]->lon, 3);
  EXPECT_EQ(found[2]->id, 10);
  EXPECT_EQ(found[3]->lat, 1);
}

// ---------------------------------------------------------------------------------------------
// Kept graphs: by name, and by the text a table source sends.

// A table source sends the query a person would write and register as a kept graph: names quoted
// only where SQL needs it, AS only for renamed columns.
TEST_F(RouterTest, TableSourceSendsThePlainQueryAPersonWouldWrite) {
  EXPECT_EQ(Router(test_dsn(), rome_table()).edges_sql(),
            "SELECT id, source, target, cost FROM rome_edges");
  EXPECT_EQ(Router(test_dsn(), sample_table()).edges_sql(), kSampleEdgesSql);
  EdgeTable odd("Road Edges", "public");
  odd.id_column = "gid";
  odd.source_column = "order";  // a reserved word
  odd.cost_column = "Length";
  odd.reverse_cost_column = "back";
  EXPECT_EQ(Router(test_dsn(), EdgeSource::from_table(odd)).edges_sql(),
            "SELECT gid AS id, \"order\" AS source, target, \"Length\" AS cost, back AS "
            "reverse_cost FROM public.\"Road Edges\"");
}

TEST_F(RouterTest, KeptGraphByNameServesEveryCall) {
  GPU_ROUTING_REQUIRE_KEPT_GRAPHS(*reference_);
  const testing::ScratchKeptGraph kept(*reference_, "client_kept");
  Router router(test_dsn(), EdgeSource::from_graph(kept.name()));
  EXPECT_EQ(router.edges_sql(), "graph:" + kept.name());

  const auto path = router.path(6, 10);
  ASSERT_TRUE(path.has_value());
  expect_same_steps(path->steps, sql_path(kSampleEdgesSql, 6, 10, true));
  EXPECT_EQ(router.last_run()->graph, kept.name());

  EXPECT_EQ(router.paths({6, 1}, {10, 17}).size(), 4u);
  EXPECT_EQ(router.last_run()->graph, kept.name());
  const CostMatrix matrix = router.cost_matrix({1, 6, 12});
  EXPECT_EQ(matrix.at(1, 0), sql_path(kSampleEdgesSql, 6, 1, true).back().agg_cost);
  EXPECT_EQ(router.last_run()->graph, kept.name());
  EXPECT_EQ(router.reachable(6, 1).size(), 3u);
  EXPECT_EQ(router.last_run()->graph, kept.name());

  // Undirected: the graph's undirected form, built on first use.
  Router both_ways(test_dsn(), EdgeSource::from_graph(kept.name()), undirected());
  EXPECT_EQ(both_ways.path(6, 10)->cost, 1);
  EXPECT_EQ(both_ways.last_run()->graph, kept.name());
}

TEST_F(RouterTest, TableSourceIsServedByTheKeptGraphOfItsText) {
  GPU_ROUTING_REQUIRE_KEPT_GRAPHS(*reference_);
  const testing::ScratchKeptGraph kept(*reference_, "client_kept_text");
  EdgeTable table(kept.name());
  table.reverse_cost_column = "reverse_cost";
  Router router(test_dsn(), EdgeSource::from_table(table));
  EXPECT_EQ(router.edges_sql(), kept.query());
  expect_same_steps(router.path(6, 10)->steps, sql_path(kSampleEdgesSql, 6, 10, true));
  EXPECT_EQ(router.last_run()->graph, kept.name());

  // The same query in other whitespace is the same text to the server.
  Router spaced(test_dsn(), EdgeSource::from_query("  SELECT id, source,\n target, cost, "
                                                   "reverse_cost   FROM " +
                                                   kept.name() + "\n"));
  EXPECT_EQ(spaced.path(6, 10)->cost, 5);
  EXPECT_EQ(spaced.last_run()->graph, kept.name());

  // Another text is read and built for the call, as without kept graphs.
  Router other(test_dsn(), EdgeSource::from_query(kept.query() + " WHERE true"));
  EXPECT_EQ(other.path(6, 10)->cost, 5);
  const auto run = other.last_run();
  EXPECT_EQ(run->graph, "");
  EXPECT_EQ(run->vertices, 17);
}

// A committed change to the graph's table is seen by the router's next call (the graph rebuilds).
TEST_F(RouterTest, KeptGraphIsNeverStaleThroughTheClient) {
  GPU_ROUTING_REQUIRE_KEPT_GRAPHS(*reference_);
  const testing::ScratchKeptGraph kept(*reference_, "client_kept_stale");
  Router router(test_dsn(), EdgeSource::from_graph(kept.name()));
  EXPECT_EQ(router.path(6, 10)->cost, 5);
  sql("UPDATE " + kept.name() + " SET cost = 3 WHERE id = 9");  // 11 -> 16 on the path
  const auto path = router.path(6, 10);
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(path->cost, 7);
  EXPECT_EQ(router.last_run()->graph, kept.name());
}

TEST_F(RouterTest, KeptGraphsListsTheGraphsOfTheDatabase) {
  GPU_ROUTING_REQUIRE_KEPT_GRAPHS(*reference_);
  const testing::ScratchKeptGraph kept(*reference_, "client_kept_list");
  Router router(test_dsn(), sample_table());
  const auto graphs = router.kept_graphs();
  const auto ours = std::find_if(graphs.begin(), graphs.end(),
                                 [&](const KeptGraph& graph) { return graph.name == kept.name(); });
  ASSERT_NE(ours, graphs.end());
  EXPECT_EQ(ours->edges_sql, kept.query());
  EXPECT_EQ(ours->refresh, "auto");
  EXPECT_EQ(ours->state, "fresh");
  EXPECT_EQ(ours->vertices, 17);
  EXPECT_EQ(ours->edges, 18);
  EXPECT_FALSE(ours->owner.empty());
  EXPECT_TRUE(
      std::is_sorted(graphs.begin(), graphs.end(),
                     [](const KeptGraph& a, const KeptGraph& b) { return a.name < b.name; }));
}

TEST_F(RouterTest, KeptGraphNamesAreCheckedAndAnUnknownOneIsAServerError) {
  EXPECT_THROW(EdgeSource::from_graph(""), UsageError);
  EXPECT_THROW(EdgeSource::from_graph("1ny"), UsageError);
  EXPECT_THROW(EdgeSource::from_graph("ny roads"), UsageError);
  EXPECT_THROW(EdgeSource::from_graph("ny;"), UsageError);
  EXPECT_THROW(EdgeSource::from_graph(std::string(64, 'a')), UsageError);
  EXPECT_EQ(EdgeSource::from_graph(std::string(63, 'a')).graph(), std::string(63, 'a'));
  EXPECT_EQ(EdgeSource::from_graph("_Ny2").query(), "graph:_Ny2");

  GPU_ROUTING_REQUIRE_KEPT_GRAPHS(*reference_);
  const std::string name = testing::unique_name("client_no_such_graph");
  Router router(test_dsn(), EdgeSource::from_graph(name));
  try {
    router.path(6, 10);
    ADD_FAILURE() << "no error";
  } catch (const ServerError& error) {
    EXPECT_EQ(error.sqlstate(), "42704");
    EXPECT_NE(std::string(error.what()).find(name), std::string::npos) << error.what();
    EXPECT_NE(error.hint().find("gpu_graph_create"), std::string::npos) << error.hint();
  }
}

// ---------------------------------------------------------------------------------------------
// Failures.

TEST_F(RouterTest, WrongConnectionStringIsAConnectionError) {
  for (const std::string& conninfo :
       {std::string("host=/nonexistent_socket_dir port=1"), std::string("not a conninfo"),
        test_dsn() + " dbname=no_such_database_here"}) {
    try {
      Router router(conninfo, sample_table());
      ADD_FAILURE() << "connected with " << conninfo;
    } catch (const ConnectionError& error) {
      EXPECT_NE(std::string(error.what()).find("cannot connect"), std::string::npos)
          << error.what();
      EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << "one line";
    }
  }
}

TEST_F(RouterTest, DatabaseWithoutTheExtensionIsAConnectionError) {
  try {
    Router router(test_dsn() + " dbname=postgres", sample_table());
    ADD_FAILURE() << "the postgres database has no gpu_routing extension";
  } catch (const ConnectionError& error) {
    EXPECT_NE(std::string(error.what()).find("no gpu_routing extension"), std::string::npos);
    EXPECT_NE(error.hint().find("CREATE EXTENSION"), std::string::npos);
  }
}

TEST_F(RouterTest, MissingTableIsAServerErrorWithItsSqlstate) {
  Router router(test_dsn(), EdgeSource::from_table(EdgeTable{"no_such_table"}));
  const int pid = router.backend_pid();
  try {
    router.path(1, 2);
    ADD_FAILURE() << "no error";
  } catch (const ServerError& error) {
    EXPECT_EQ(error.sqlstate(), "42P01");
    EXPECT_STREQ(error.what(), "relation \"no_such_table\" does not exist");
  }
  // The session survives a server error: no reconnection.
  EXPECT_THROW(router.reachable(1, 10), ServerError);
  EXPECT_EQ(router.backend_pid(), pid);
  EXPECT_EQ(router.reconnections(), 0);
}

TEST_F(RouterTest, ServerErrorsCarryMessageSqlstateAndHint) {
  Router division(test_dsn(), EdgeSource::from_query(
                                  "SELECT id, source, target, cost / 0 AS cost FROM sample_edges"));
  try {
    division.path(1, 2);
    ADD_FAILURE() << "no error";
  } catch (const ServerError& error) {
    EXPECT_EQ(error.sqlstate(), "22012");
    EXPECT_STREQ(error.what(), "division by zero");
  }

  Router nulls(test_dsn(),
               EdgeSource::from_query("SELECT id, NULLIF(source, 5) AS source, target, cost FROM "
                                      "sample_edges ORDER BY id"));
  try {
    nulls.reachable(6, 10);
    ADD_FAILURE() << "no error";
  } catch (const ServerError& error) {
    EXPECT_EQ(std::string(error.what()), "column \"source\" of edges_sql is NULL in row 1");
    EXPECT_NE(error.hint().find("COALESCE"), std::string::npos) << error.hint();
    EXPECT_FALSE(error.sqlstate().empty());
  }

  // gpu_routing.max_memory refuses the whole Rome matrix; the hint says what to do.
  RouterOptions small_memory;
  small_memory.engine.max_memory = "1MB";
  Router limited(test_dsn(), rome_table(), small_memory);
  std::vector<VertexId> all(3353);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<VertexId>(i + 1);
  MatrixOptions one_batch;
  one_batch.batch_sources = all.size();
  try {
    limited.cost_matrix(all, one_batch);
    ADD_FAILURE() << "no error";
  } catch (const ServerError& error) {
    EXPECT_EQ(error.sqlstate(), "53200");  // out_of_memory
    EXPECT_NE(std::string(error.what()).find("gpu_routing.max_memory"), std::string::npos);
    EXPECT_NE(error.hint().find("max_memory"), std::string::npos);
  }
}

TEST_F(RouterTest, InvalidSettingIsRefusedAtConnect) {
  RouterOptions options;
  options.engine.device = "somewhere";
  try {
    Router router(test_dsn(), sample_table(), options);
    ADD_FAILURE() << "accepted gpu_routing.device = somewhere";
  } catch (const ServerError& error) {
    EXPECT_EQ(error.sqlstate(), "22023");
    EXPECT_NE(std::string(error.what()).find("gpu_routing.device"), std::string::npos);
  }
  RouterOptions engine;
  engine.engine.sssp_algorithm = "no_such_engine";
  EXPECT_THROW((Router{test_dsn(), sample_table(), engine}), ServerError);
}

TEST_F(RouterTest, BackendKilledBetweenCallsIsReopenedAndTheCallRetried) {
  RouterOptions options;
  options.engine.device = "cpu";
  options.application_name = testing::unique_name("client_reconnect");
  Router router(test_dsn(), sample_table(), options);
  ASSERT_TRUE(router.path(6, 10).has_value());
  const int old_pid = router.backend_pid();

  ASSERT_TRUE(sql_params("SELECT pg_terminate_backend($1)", old_pid)[0][0].as<bool>());
  // Wait until the backend is gone, so the next call surely meets a closed connection.
  for (int i = 0; i < 100; ++i) {
    if (sql_params("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", old_pid)[0][0]
            .as<int>() == 0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  const auto path = router.path(6, 10);
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(path->cost, 5);
  EXPECT_EQ(router.reconnections(), 1);
  EXPECT_NE(router.backend_pid(), old_pid);
  // The new session got the router's settings again.
  EXPECT_EQ(sql_params("SELECT application_name FROM pg_stat_activity WHERE pid = $1",
                       router.backend_pid())[0][0]
                .as<std::string>(),
            options.application_name);
  const auto run = router.last_run();
  ASSERT_TRUE(run.has_value());
  EXPECT_NE(run->device.find("CPU"), std::string::npos) << run->device;

  // And once more, for a cost matrix.
  ASSERT_TRUE(sql_params("SELECT pg_terminate_backend($1)", router.backend_pid())[0][0].as<bool>());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(router.cost_matrix({6, 10}).at(0, 1), 5);
  EXPECT_EQ(router.reconnections(), 2);
}

TEST_F(RouterTest, BackendKilledDuringACallIsReopenedAndTheCallRetried) {
  // The edges query sleeps 0.6 s; the backend is terminated 0.2 s into the call.
  Router router(test_dsn(), EdgeSource::from_query(
                                "SELECT id, source, target, cost, reverse_cost FROM sample_edges "
                                "CROSS JOIN pg_sleep(0.6)"));
  const int old_pid = router.backend_pid();
  std::thread killer([&] {
    pqxx::connection connection(test_dsn());
    for (int i = 0; i < 100; ++i) {
      pqxx::nontransaction tx(connection);
      // Wait until the call is running, then terminate its backend.
      if (tx.exec_params("SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = "
                         "'active'",
                         old_pid)[0][0]
              .as<int>() > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        tx.exec_params("SELECT pg_terminate_backend($1)", old_pid);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::optional<Path> path;
  EXPECT_NO_THROW(path = router.path(6, 10));
  killer.join();
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(path->cost, 5);
  EXPECT_EQ(router.reconnections(), 1);
  EXPECT_NE(router.backend_pid(), old_pid);
}

TEST_F(RouterTest, ServerThatStaysDownIsAConnectionError) {
  // A router whose connection is killed and whose database then refuses new connections: the one
  // reconnection fails, and that is a ConnectionError, not a hang or a crash.
  const std::string database = testing::unique_name("client_gone");
  sql("DROP DATABASE IF EXISTS " + database);
  sql("CREATE DATABASE " + database);
  {
    pqxx::connection setup(test_dsn() + " dbname=" + database);
    pqxx::nontransaction tx(setup);
    tx.exec("CREATE EXTENSION gpu_routing");
    tx.exec(
        "CREATE TABLE edges AS SELECT * FROM (VALUES (1, 1, 2, 1.0)) e(id, source, target, cost)");
  }
  {
    Router router(test_dsn() + " dbname=" + database, EdgeSource::from_table(EdgeTable{"edges"}));
    ASSERT_TRUE(router.path(1, 2).has_value());
    sql("ALTER DATABASE " + database + " ALLOW_CONNECTIONS false");
    sql_params("SELECT pg_terminate_backend($1)", router.backend_pid());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_THROW(router.path(1, 2), ConnectionError);
  }
  sql("DROP DATABASE " + database);
}

TEST_F(RouterTest, TimeoutIsStatementTimeoutWithSqlstate57014) {
  // An edges query that takes half a second.
  Router router(test_dsn(), EdgeSource::from_query(
                                "SELECT id, source, target, cost, reverse_cost FROM sample_edges "
                                "CROSS JOIN pg_sleep(0.5)"));
  CallOptions quick;
  quick.timeout = std::chrono::milliseconds(100);
  const auto started = std::chrono::steady_clock::now();
  try {
    router.path(6, 10, quick);
    ADD_FAILURE() << "no timeout";
  } catch (const TimeoutError& error) {
    EXPECT_EQ(error.sqlstate(), "57014");
    EXPECT_NE(std::string(error.what()).find("statement timeout"), std::string::npos);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(450));
  // The next call without a timeout runs to the end: the session's timeout is restored.
  ASSERT_TRUE(router.path(6, 10).has_value());
  EXPECT_EQ(router.reconnections(), 0);

  // A router-wide timeout, and a cost matrix whose whole budget runs out across batches.
  RouterOptions options;
  options.timeout = std::chrono::milliseconds(100);
  Router impatient(test_dsn(), EdgeSource::from_query(router.edges_sql()), options);
  EXPECT_THROW(impatient.reachable(6, 10), TimeoutError);
  MatrixOptions matrix_call;
  matrix_call.batch_sources = 1;
  matrix_call.timeout = std::chrono::milliseconds(800);
  try {
    router.cost_matrix({6, 1, 10, 17}, matrix_call);  // four batches of half a second each
    ADD_FAILURE() << "no timeout";
  } catch (const TimeoutError& error) {
    EXPECT_EQ(error.sqlstate(), "57014");
  }
}

TEST_F(RouterTest, UsageErrors) {
  EXPECT_THROW(EdgeSource::from_table(EdgeTable{""}), UsageError);
  EXPECT_THROW(EdgeSource::from_query("  "), UsageError);
  EXPECT_THROW((Router{test_dsn(), EdgeSource{}}), UsageError);
  Router router(test_dsn(), sample_table());
  EXPECT_THROW(router.nearest_vertex(VertexTable{""}, 0, 0), UsageError);
  EXPECT_THROW(router.nearest_vertex(VertexTable{"v"}, std::nan(""), 0), UsageError);
}

TEST_F(RouterTest, RouterMovesWithItsConnection) {
  Router first(test_dsn(), sample_table());
  const int pid = first.backend_pid();
  Router second = std::move(first);
  EXPECT_EQ(second.backend_pid(), pid);
  EXPECT_EQ(second.path(6, 10)->cost, 5);
}

}  // namespace
}  // namespace gpu_routing
