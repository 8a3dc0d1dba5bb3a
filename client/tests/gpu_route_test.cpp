// gpu-route, the built binary: exit codes, one-line messages, and every output format against
// the SQL functions' rows.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "text.hpp"

namespace gpu_routing {
namespace {

using testing::CommandResult;
using testing::kRomeEdgesSql;
using testing::kSampleEdgesSql;
using testing::lines_of;
using testing::run_gpu_route;
using testing::test_dsn;

// The connection and the sample network's table, as gpu-route options.
std::vector<std::string> sample(std::vector<std::string> arguments) {
  for (const std::string& option :
       {std::string("--db"), test_dsn(), std::string("--edges-table"), std::string("sample_edges"),
        std::string("--reverse-cost-column"), std::string("reverse_cost")}) {
    arguments.push_back(option);
  }
  return arguments;
}

std::vector<std::string> rome(std::vector<std::string> arguments) {
  arguments.insert(arguments.end(), {"--db", test_dsn(), "--edges-table", "rome_edges"});
  return arguments;
}

void expect_one_line_error(const CommandResult& result, int exit_code) {
  EXPECT_EQ(result.exit_code, exit_code) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
  ASSERT_EQ(lines_of(result.err).size(), 1u) << result.err;
  EXPECT_EQ(result.err.rfind("gpu-route: ", 0), 0u) << result.err;
}

// ---------------------------------------------------------------------------------------------
// Usage: no database needed.

TEST(GpuRoute, HelpShowsEveryOptionWithAnExample) {
  const CommandResult result = run_gpu_route({"--help"});
  EXPECT_EQ(result.exit_code, 0);
  for (const char* option : {"--from ",
                             "--from-coord",
                             "--to ",
                             "--to-coord",
                             "--ids",
                             "--sources",
                             "--targets",
                             "--max-cost",
                             "--db",
                             "--edges-table",
                             "--id-column",
                             "--source-column",
                             "--target-column",
                             "--cost-column",
                             "--reverse-cost-column",
                             "--edges-sql",
                             "--graph",
                             "gpu-route graphs",
                             "--undirected",
                             "--vertices-table",
                             "--vertex-id-column",
                             "--lon-column",
                             "--lat-column",
                             "--device",
                             "--sssp-algorithm",
                             "--apsp-algorithm",
                             "--threads",
                             "--max-memory",
                             "--timeout",
                             "--format",
                             "--batch-size",
                             "--no-progress",
                             "--verbose",
                             "--help",
                             "--version",
                             "Exit codes"}) {
    EXPECT_NE(result.out.find(option), std::string::npos) << option;
  }
  // Every option that takes a value is shown with an example: its name appears a second time
  // in its own entry (the entry runs until the next option).
  std::vector<std::string> entries;
  for (const std::string& line : lines_of(result.out)) {
    if (line.rfind("  --", 0) == 0) {
      entries.push_back(line);
    } else if (!entries.empty() && line.rfind("    ", 0) == 0) {
      entries.back() += "\n" + line;
    } else if (!entries.empty()) {
      entries.push_back("");
    }
  }
  for (const std::string& entry : entries) {
    if (entry.empty()) continue;
    const std::string option = entry.substr(2, entry.find(' ', 2) - 2);
    if (option == "--help" || option == "--version" || option == "--no-progress") continue;
    const std::size_t first = entry.find(option);
    EXPECT_NE(entry.find(option, first + option.size()), std::string::npos)
        << "no example for " << option << ":\n"
        << entry;
  }
  EXPECT_EQ(run_gpu_route({"path", "--help"}).exit_code, 0);
  EXPECT_EQ(run_gpu_route({"--version"}).exit_code, 0);
}

TEST(GpuRoute, UsageErrorsExitWithTwoAndOneLine) {
  expect_one_line_error(run_gpu_route({}), 2);
  expect_one_line_error(run_gpu_route({"fly"}), 2);
  expect_one_line_error(run_gpu_route({"path", "--from", "1"}), 2);
  expect_one_line_error(run_gpu_route({"path", "--from", "x", "--to", "2"}), 2);
  expect_one_line_error(run_gpu_route({"path", "--from", "1", "--to", "2", "--colour", "red"}), 2);
  expect_one_line_error(run_gpu_route({"path", "--from-coord", "-73.9", "--to", "2"}), 2);
  expect_one_line_error(run_gpu_route({"path", "--from", "1", "--to", "2", "--format", "xml"}), 2);
  expect_one_line_error(run_gpu_route({"matrix", "--ids", "1,2", "--format", "geojson"}), 2);
  expect_one_line_error(run_gpu_route({"matrix", "--sources", "1,2"}), 2);
  expect_one_line_error(run_gpu_route({"reachable", "--from", "1"}), 2);
  expect_one_line_error(run_gpu_route({"path", "--from", "1", "--to", "2", "--timeout", "-1"}), 2);
  expect_one_line_error(run_gpu_route({"matrix", "--ids", "@/no/such/file"}), 2);
  expect_one_line_error(run_gpu_route({"path", "--from", "1", "--to", "2", "--edges-sql",
                                       "SELECT 1", "--cost-column", "length"}),
                        2);
  expect_one_line_error(run_gpu_route({"path", "--from", "1", "--to", "2", "--graph", "ny",
                                       "--edges-sql", "SELECT 1"}),
                        2);
  expect_one_line_error(run_gpu_route({"path", "--from", "1", "--to", "2", "--graph", "ny",
                                       "--edges-table", "roads"}),
                        2);
  expect_one_line_error(run_gpu_route({"path", "--from", "1", "--to", "2", "--graph", "ny roads"}),
                        2);
  expect_one_line_error(run_gpu_route({"path", "--from", "1", "--to", "2", "--graph", ""}), 2);
  expect_one_line_error(run_gpu_route({"graphs", "--ids", "1,2"}), 2);
  expect_one_line_error(run_gpu_route({"graphs", "--format", "geojson"}), 2);
}

// ---------------------------------------------------------------------------------------------
// Against the test database.

class GpuRouteTest : public testing::DatabaseTest {};

TEST_F(GpuRouteTest, WrongConnectionExitsWithTwo) {
  expect_one_line_error(
      run_gpu_route({"path", "--from", "1", "--to", "2", "--db", "host=/nonexistent port=1"}), 2);
  expect_one_line_error(
      run_gpu_route({"path", "--from", "1", "--to", "2", "--db", test_dsn() + " dbname=postgres"}),
      2);
}

TEST_F(GpuRouteTest, ServerErrorsExitWithThreeAndTheSqlstate) {
  const CommandResult missing = run_gpu_route(
      {"path", "--from", "1", "--to", "2", "--db", test_dsn(), "--edges-table", "no_such_table"});
  expect_one_line_error(missing, 3);
  EXPECT_NE(missing.err.find("[42P01]"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("no_such_table"), std::string::npos) << missing.err;

  const CommandResult slow = run_gpu_route(
      {"path", "--from", "6", "--to", "10", "--db", test_dsn(), "--timeout", "0.1", "--edges-sql",
       "SELECT id, source, target, cost FROM sample_edges CROSS JOIN pg_sleep(0.5)"});
  expect_one_line_error(slow, 3);
  EXPECT_NE(slow.err.find("[57014]"), std::string::npos) << slow.err;

  expect_one_line_error(run_gpu_route(sample({"path", "--from", "6", "--to", "10", "--device",
                                              "cpu", "--sssp-algorithm", "no_such_engine"})),
                        3);
}

TEST_F(GpuRouteTest, NoRouteExitsWithOne) {
  const CommandResult result = run_gpu_route(sample({"path", "--from", "6", "--to", "2"}));
  expect_one_line_error(result, 1);
  EXPECT_NE(result.err.find("no route from 6 to 2"), std::string::npos) << result.err;
  expect_one_line_error(run_gpu_route(sample({"reachable", "--from", "999", "--max-cost", "5"})),
                        1);
}

TEST_F(GpuRouteTest, PathFormatsMatchGpuPath) {
  const auto rows = sql("SELECT seq, node, edge, cost, agg_cost FROM gpu_path('" +
                        std::string(kSampleEdgesSql) + "', 6, 10) ORDER BY seq");

  const CommandResult csv =
      run_gpu_route(sample({"path", "--from", "6", "--to", "10", "--format", "csv"}));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::string expected = "seq,node,edge,cost,agg_cost\n";
  for (const auto& row : rows) {
    expected += std::string(row[0].c_str()) + "," + row[1].c_str() + "," + row[2].c_str() + "," +
                row[3].c_str() + "," + row[4].c_str() + "\n";
  }
  EXPECT_EQ(csv.out, expected);

  const CommandResult table = run_gpu_route(sample({"path", "--from", "6", "--to", "10"}));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const auto table_lines = lines_of(table.out);
  ASSERT_EQ(table_lines.size(), rows.size() + 3);
  EXPECT_EQ(table_lines[0], "seq | node | edge | cost | agg_cost");
  EXPECT_EQ(table_lines[1], "----+------+------+------+---------");
  EXPECT_EQ(table_lines[2], "  1 |    6 |    4 |    1 |        0");
  EXPECT_EQ(table_lines.back(), "(5 edges, cost 5)");

  const CommandResult json =
      run_gpu_route(sample({"path", "--from", "6", "--to", "10", "--format", "json"}));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.rfind("{\"from\":6,\"to\":10,\"cost\":5,\"steps\":[{\"seq\":1,\"node\":6,"
                           "\"edge\":4,\"cost\":1,\"agg_cost\":0},",
                           0),
            0u)
      << json.out;
  EXPECT_NE(json.out.find("{\"seq\":6,\"node\":10,\"edge\":-1,\"cost\":0,\"agg_cost\":5}]}"),
            std::string::npos)
      << json.out;

  // Undirected: the direct edge 6 - 10.
  const CommandResult both_ways = run_gpu_route(
      sample({"path", "--from", "6", "--to", "10", "--undirected", "--format", "csv"}));
  EXPECT_EQ(both_ways.out, "seq,node,edge,cost,agg_cost\n1,6,2,1,0\n2,10,-1,0,1\n");
}

TEST_F(GpuRouteTest, GeojsonRouteUsesTheVertexCoordinates) {
  const std::string vertices = testing::unique_name("client_cli_vertices");
  testing::ScratchTable table(
      *reference_, vertices,
      "CREATE TABLE " + vertices +
          " AS SELECT DISTINCT ON (id) id, x AS lon, y AS lat FROM ("
          "SELECT source AS id, x1 AS x, y1 AS y FROM sample_edges UNION ALL "
          "SELECT target, x2, y2 FROM sample_edges) v ORDER BY id");
  // From near vertex 6 (2, 1) to near vertex 10 (3, 1), by coordinates.
  const CommandResult result =
      run_gpu_route(sample({"path", "--from-coord", "2.01,1.02", "--to-coord", "2.98,0.99",
                            "--vertices-table", vertices, "--format", "geojson", "--verbose"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "{\"type\":\"Feature\",\"geometry\":{\"type\":\"LineString\",\"coordinates\":"
            "[[2,1],[2,2],[3,2],[4,2],[4,1],[3,1]]},\"properties\":{\"from\":6,\"to\":10,"
            "\"cost\":5,\"edge_count\":5,\"vertices\":[6,7,11,16,15,10],\"edges\":[4,8,9,16,3]}}"
            "\n");
  EXPECT_NE(result.err.find("is vertex 6"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("gpu_path"), std::string::npos) << result.err;

  // Reachable as Points.
  const CommandResult points =
      run_gpu_route(sample({"reachable", "--from", "6", "--max-cost", "1", "--vertices-table",
                            vertices, "--format", "geojson"}));
  ASSERT_EQ(points.exit_code, 0) << points.err;
  EXPECT_EQ(std::count(points.out.begin(), points.out.end(), '\n'), 5) << points.out;  // 3 points
  EXPECT_NE(points.out.find("\"coordinates\":[2,1]},\"properties\":{\"node\":6,\"distance\":0,"
                            "\"predecessor\":null}"),
            std::string::npos)
      << points.out;

  // A vertex table that lacks a vertex of the route.
  sql("DELETE FROM " + vertices + " WHERE id = 11");
  const CommandResult hole = run_gpu_route(sample(
      {"path", "--from", "6", "--to", "10", "--vertices-table", vertices, "--format", "geojson"}));
  expect_one_line_error(hole, 2);
}

TEST_F(GpuRouteTest, MatrixFormatsMatchGpuApsp) {
  const std::string ids = "1,500,1000,3000,3353";
  const auto rows =
      sql("SELECT start_vid, end_vid, agg_cost FROM gpu_apsp('" + std::string(kRomeEdgesSql) +
          "', '{" + ids + "}'::bigint[], '{" + ids + "}'::bigint[])");
  std::map<std::pair<std::string, std::string>, std::string> expected;
  for (const auto& row : rows) expected[{row[0].c_str(), row[1].c_str()}] = row[2].c_str();

  // CSV in batches of two sources (three requests): every pair, "" where unreachable.
  const CommandResult csv =
      run_gpu_route(rome({"matrix", "--ids", ids, "--format", "csv", "--batch-size", "2"}));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_TRUE(csv.err.empty()) << "no progress bar when stderr is not a terminal: " << csv.err;
  const auto lines = lines_of(csv.out);
  ASSERT_EQ(lines.size(), 1 + 25u);
  EXPECT_EQ(lines[0], "source,target,cost");
  std::size_t finite = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::size_t a = line.find(','), b = line.find(',', a + 1);
    const std::string s = line.substr(0, a), t = line.substr(a + 1, b - a - 1),
                      c = line.substr(b + 1);
    if (s == t) {
      EXPECT_EQ(c, "0");
    } else if (expected.count({s, t})) {
      EXPECT_EQ(c, expected[std::make_pair(s, t)]) << line;
      ++finite;
    } else {
      EXPECT_EQ(c, "") << line;
    }
  }
  EXPECT_EQ(finite, expected.size());

  // The same ids from a file, as JSON.
  const CommandResult json = run_gpu_route(rome({"matrix", "--ids", "@-", "--format", "json"}),
                                           "1\n500\n1000 3000\n3353\n");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.rfind("{\"sources\":[1,500,1000,3000,3353],\"targets\":[1,500,1000,3000,3353],"
                           "\"costs\":[\n[0,",
                           0),
            0u)
      << json.out;
  EXPECT_EQ(std::count(json.out.begin(), json.out.end(), '['), 3 + 5);

  // The aligned grid.
  const CommandResult grid =
      run_gpu_route(rome({"matrix", "--sources", "1,500", "--targets", "1000,3353,1"}));
  ASSERT_EQ(grid.exit_code, 0) << grid.err;
  const auto grid_lines = lines_of(grid.out);
  ASSERT_EQ(grid_lines.size(), 4u);
  EXPECT_EQ(grid_lines[0].rfind("source \\ target | ", 0), 0u) << grid.out;
  EXPECT_NE(grid_lines[0].find(" 3353 |"), std::string::npos) << grid.out;
  EXPECT_NE(grid_lines[2].find(expected[std::make_pair(std::string("1"), std::string("1000"))]),
            std::string::npos)
      << grid.out;
}

TEST_F(GpuRouteTest, ReachableFormatsMatchGpuSssp) {
  const auto rows =
      sql("SELECT node, distance, predecessor, edge FROM gpu_sssp('" + std::string(kRomeEdgesSql) +
          "', 1000::bigint) WHERE distance <= 2000 ORDER BY node");
  const CommandResult csv =
      run_gpu_route(rome({"reachable", "--from", "1000", "--max-cost", "2000", "--format", "csv"}));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::string expected = "node,distance,predecessor,edge\n";
  for (const auto& row : rows) {
    expected += std::string(row[0].c_str()) + "," + row[1].c_str() + "," + row[2].c_str() + "," +
                row[3].c_str() + "\n";
  }
  EXPECT_EQ(csv.out, expected);

  const CommandResult json =
      run_gpu_route(rome({"reachable", "--from", "1000", "--max-cost", "0", "--format", "json"}));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out,
            "{\"from\":1000,\"max_cost\":0,\"reached\":[{\"node\":1000,\"distance\":0,"
            "\"predecessor\":null,\"edge\":null}]}\n");

  const CommandResult table =
      run_gpu_route(rome({"reachable", "--from", "1000", "--max-cost", "2000"}));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(lines_of(table.out).size(), rows.size() + 3);
}

// ---------------------------------------------------------------------------------------------
// Kept graphs.

TEST_F(GpuRouteTest, GraphOptionUsesTheKeptGraphAndVerboseSaysSo) {
  GPU_ROUTING_REQUIRE_KEPT_GRAPHS(*reference_);
  const testing::ScratchKeptGraph kept(*reference_, "cli_kept");
  const CommandResult expected =
      run_gpu_route(sample({"path", "--from", "6", "--to", "10", "--format", "csv"}));
  ASSERT_EQ(expected.exit_code, 0) << expected.err;

  const CommandResult named = run_gpu_route({"path", "--from", "6", "--to", "10", "--format", "csv",
                                             "--db", test_dsn(), "--graph", kept.name(), "-v"});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_EQ(named.out, expected.out);
  EXPECT_NE(named.err.find("gpu-route: kept graph " + kept.name() + " served the call"),
            std::string::npos)
      << named.err;

  // Every subcommand takes it.
  const CommandResult matrix = run_gpu_route(
      {"matrix", "--ids", "1,6,12", "--db", test_dsn(), "--graph", kept.name(), "-v"});
  ASSERT_EQ(matrix.exit_code, 0) << matrix.err;
  EXPECT_NE(matrix.err.find("kept graph " + kept.name() + " served"), std::string::npos)
      << matrix.err;
  const CommandResult reached =
      run_gpu_route({"reachable", "--from", "6", "--max-cost", "1", "--db", test_dsn(), "--graph",
                     kept.name(), "-v", "--undirected", "--format", "csv"});
  ASSERT_EQ(reached.exit_code, 0) << reached.err;
  EXPECT_NE(reached.err.find("kept graph " + kept.name() + " served"), std::string::npos)
      << reached.err;
}

// Without --graph: the table's query is the graph's registered text, so the graph serves it.
TEST_F(GpuRouteTest, TableOptionsAreServedByTheKeptGraphOfTheirQuery) {
  GPU_ROUTING_REQUIRE_KEPT_GRAPHS(*reference_);
  const testing::ScratchKeptGraph kept(*reference_, "cli_kept_text");
  const CommandResult matched =
      run_gpu_route({"path", "--from", "6", "--to", "10", "--db", test_dsn(), "--edges-table",
                     kept.name(), "--reverse-cost-column", "reverse_cost", "-v"});
  ASSERT_EQ(matched.exit_code, 0) << matched.err;
  EXPECT_NE(matched.err.find("gpu-route: kept graph " + kept.name() + " served the call"),
            std::string::npos)
      << matched.err;
  const CommandResult as_text = run_gpu_route(
      {"path", "--from", "6", "--to", "10", "--db", test_dsn(), "--edges-sql", kept.query(), "-v"});
  ASSERT_EQ(as_text.exit_code, 0) << as_text.err;
  EXPECT_NE(as_text.err.find("kept graph " + kept.name() + " served"), std::string::npos)
      << as_text.err;

  // Another query: read for the call; -v names the kept graphs there are.
  const CommandResult other =
      run_gpu_route({"path", "--from", "6", "--to", "10", "--db", test_dsn(), "--edges-sql",
                     kept.query() + " WHERE id > 0", "-v"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  const std::string line = lines_of(other.err).back();
  EXPECT_EQ(line.rfind("gpu-route: no kept graph served the call (its edges query is none of "
                       "theirs); this database keeps ",
                       0),
            0u)
      << other.err;
  EXPECT_NE(line.find(kept.name()), std::string::npos) << line;
  EXPECT_NE(line.find("--graph NAME uses one"), std::string::npos) << line;
}

// A database that keeps no graphs: -v adds nothing about them (its load time shows the read), and
// graphs says there are none.
TEST_F(GpuRouteTest, VerboseWithoutKeptGraphsAddsNothing) {
  GPU_ROUTING_REQUIRE_KEPT_GRAPHS(*reference_);
  const std::string database = testing::unique_name("client_no_graphs");
  sql("DROP DATABASE IF EXISTS " + database);
  sql("CREATE DATABASE " + database);
  const std::string dsn = test_dsn() + " dbname=" + database;
  {
    pqxx::connection fresh(dsn);
    pqxx::nontransaction tx(fresh);
    tx.exec("CREATE EXTENSION gpu_routing");
    tx.exec(
        "CREATE TABLE roads AS SELECT id, source, target, cost FROM (VALUES (1, 1, 2, 5.0)) "
        "AS e(id, source, target, cost)");
  }
  const CommandResult path = run_gpu_route(
      {"path", "--from", "1", "--to", "2", "--db", dsn, "--edges-table", "roads", "-v"});
  const CommandResult table = run_gpu_route({"graphs", "--db", dsn});
  const CommandResult json = run_gpu_route({"graphs", "--db", dsn, "--format", "json"});
  sql("DROP DATABASE " + database + " WITH (FORCE)");
  ASSERT_EQ(path.exit_code, 0) << path.err;
  const auto lines = lines_of(path.err);
  ASSERT_EQ(lines.size(), 1u) << path.err;
  EXPECT_EQ(lines[0].rfind("gpu-route: gpu_path on ", 0), 0u) << path.err;
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.rfind("(no kept graphs in this database", 0), 0u) << table.out;
  EXPECT_EQ(json.out, "[]\n");
}

TEST_F(GpuRouteTest, GraphsListsTheKeptGraphsInEveryFormat) {
  GPU_ROUTING_REQUIRE_KEPT_GRAPHS(*reference_);
  const testing::ScratchKeptGraph kept(*reference_, "cli_kept_list");
  const CommandResult table = run_gpu_route({"graphs", "--db", test_dsn()});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const auto lines = lines_of(table.out);
  ASSERT_GE(lines.size(), 3u) << table.out;
  // Columns are as wide as the database's widest value (other kept graphs may be listed too):
  // compare the cells, trimmed.
  const auto cells = [](const std::string& line) {
    std::vector<std::string> out;
    std::size_t begin = 0;
    while (true) {
      const std::size_t bar = line.find('|', begin);
      std::string cell = line.substr(begin, bar == std::string::npos ? bar : bar - begin);
      const std::size_t first = cell.find_first_not_of(' ');
      const std::size_t last = cell.find_last_not_of(' ');
      out.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
      if (bar == std::string::npos) return out;
      begin = bar + 1;
    }
  };
  EXPECT_EQ(cells(lines[0]),
            (std::vector<std::string>{"name", "state", "vertices", "edges", "edges_sql"}))
      << table.out;
  const auto row = std::find_if(lines.begin(), lines.end(), [&](const std::string& line) {
    return line.rfind(kept.name() + " ", 0) == 0;
  });
  ASSERT_NE(row, lines.end()) << table.out;
  EXPECT_EQ(cells(*row), (std::vector<std::string>{kept.name(), "fresh", "17", "18", kept.query()}))
      << *row;

  const CommandResult csv = run_gpu_route({"graphs", "--db", test_dsn(), "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("name,owner,state,refresh,vertices,edges,edges_sql,forms,note\n", 0), 0u)
      << csv.out;
  EXPECT_NE(csv.out.find("\n" + kept.name() + ","), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",fresh,auto,17,18,\"" + kept.query() + "\",directed,"), std::string::npos)
      << csv.out;

  const CommandResult json = run_gpu_route({"graphs", "--db", test_dsn(), "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.rfind("[\n{\"name\":", 0), 0u) << json.out;
  EXPECT_NE(json.out.find("{\"name\":\"" + kept.name() + "\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"state\":\"fresh\",\"refresh\":\"auto\",\"vertices\":17,\"edges\":18,"
                          "\"edges_sql\":\"" +
                          kept.query() + "\""),
            std::string::npos)
      << json.out;
}

TEST_F(GpuRouteTest, UnknownKeptGraphExitsWithThree) {
  GPU_ROUTING_REQUIRE_KEPT_GRAPHS(*reference_);
  const std::string name = testing::unique_name("cli_no_such_graph");
  const CommandResult result =
      run_gpu_route({"path", "--from", "6", "--to", "10", "--db", test_dsn(), "--graph", name});
  expect_one_line_error(result, 3);
  EXPECT_NE(result.err.find("[42704]"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("no kept graph named \"" + name + "\""), std::string::npos)
      << result.err;
}

TEST_F(GpuRouteTest, ConnectionFromPgEnvironment) {
  // No --db: libpq reads PG* variables. The DSN's parts become PGHOST/PGPORT/PGUSER/PGDATABASE.
  std::string environment;
  std::istringstream parts(test_dsn());
  for (std::string part; parts >> part;) {
    const std::size_t eq = part.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = part.substr(0, eq), value = part.substr(eq + 1);
    const std::map<std::string, std::string> names{
        {"host", "PGHOST"}, {"port", "PGPORT"}, {"user", "PGUSER"}, {"dbname", "PGDATABASE"}};
    if (names.count(key)) environment += names.at(key) + "=" + testing::shell_quote(value) + " ";
  }
  const std::string command = "env " + environment + testing::shell_quote(GPU_ROUTE_BINARY) +
                              " path --from 6 --to 10 --edges-table sample_edges "
                              "--reverse-cost-column reverse_cost --format csv > /dev/null";
  EXPECT_EQ(std::system(command.c_str()), 0);
}

}  // namespace
}  // namespace gpu_routing
