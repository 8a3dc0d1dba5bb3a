// Shared by the client tests: the test database (GPU_ROUTING_TEST_DSN, set by scripts/test.sh to
// the throwaway cluster's database holding test/fixtures.sql), a direct libpqxx connection for the
// reference rows, tables of the test's own, and running gpu-route.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

namespace gpu_routing::testing {

inline std::string test_dsn() {
  const char* dsn = std::getenv("GPU_ROUTING_TEST_DSN");
  return dsn == nullptr ? std::string() : std::string(dsn);
}

// Skips the test when no test database is given.
#define GPU_ROUTING_REQUIRE_DATABASE()                                             \
  do {                                                                             \
    if (::gpu_routing::testing::test_dsn().empty()) {                              \
      GTEST_SKIP() << "GPU_ROUTING_TEST_DSN is not set (scripts/test.sh sets it)"; \
    }                                                                              \
  } while (0)

// A name no other test process uses: ctest may run tests in parallel processes.
inline std::string unique_name(const std::string& stem) {
  return stem + "_" + std::to_string(::getpid());
}

inline const char* kSampleEdgesSql =
    "SELECT id, source, target, cost, reverse_cost FROM sample_edges";
inline const char* kRomeEdgesSql = "SELECT id, source, target, cost FROM rome_edges";

// A test against the test database, with a direct libpqxx connection for reference rows.
class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GPU_ROUTING_REQUIRE_DATABASE();
    reference_ = std::make_unique<pqxx::connection>(test_dsn());
  }
  pqxx::result sql(const std::string& query) {
    pqxx::nontransaction tx(*reference_);
    return tx.exec(query);
  }
  std::unique_ptr<pqxx::connection> reference_;
};

// A table made for one test and dropped after it.
class ScratchTable {
 public:
  ScratchTable(pqxx::connection& connection, std::string quoted_name, const std::string& create)
      : connection_(connection), quoted_name_(std::move(quoted_name)) {
    pqxx::nontransaction tx(connection_);
    tx.exec("DROP TABLE IF EXISTS " + quoted_name_);
    tx.exec(create);
  }
  ~ScratchTable() {
    try {
      pqxx::nontransaction tx(connection_);
      tx.exec("DROP TABLE IF EXISTS " + quoted_name_);
    } catch (...) {
    }
  }
  const std::string& name() const { return quoted_name_; }

 private:
  pqxx::connection& connection_;
  std::string quoted_name_;
};

// Skips the test when the server cannot keep graphs (gpu_routing not in shared_preload_libraries;
// scripts/cluster.sh preloads it).
#define GPU_ROUTING_REQUIRE_KEPT_GRAPHS(connection)                                            \
  do {                                                                                         \
    pqxx::nontransaction check_(connection);                                                   \
    if (!check_.exec1("SELECT current_setting('shared_preload_libraries') ~ 'gpu_routing'")[0] \
             .as<bool>()) {                                                                    \
      GTEST_SKIP() << "kept graphs need gpu_routing in shared_preload_libraries";              \
    }                                                                                          \
  } while (0)

// A copy of sample_edges and a kept graph of the same name reading it, made for one test and
// dropped after it (the graph first: it reads the table). query() is the graph's registered text,
// the text a table source of the client sends for that table with reverse_cost.
class ScratchKeptGraph {
 public:
  ScratchKeptGraph(pqxx::connection& connection, const std::string& stem)
      : connection_(connection),
        name_(unique_name(stem)),
        table_(connection, name_,
               "CREATE TABLE " + name_ +
                   " AS SELECT id, source, target, cost, reverse_cost FROM sample_edges"),
        query_("SELECT id, source, target, cost, reverse_cost FROM " + name_) {
    pqxx::nontransaction tx(connection_);
    tx.exec_params("SELECT gpu_graph_create($1, $2)", name_, query_);
  }
  ~ScratchKeptGraph() {
    try {
      pqxx::nontransaction tx(connection_);
      tx.exec_params("SELECT gpu_graph_drop($1)", name_);
    } catch (...) {
    }
  }
  const std::string& name() const { return name_; }
  const std::string& query() const { return query_; }

 private:
  pqxx::connection& connection_;
  std::string name_;
  ScratchTable table_;
  std::string query_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

inline std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream content;
  content << file.rdbuf();
  return content.str();
}

// Runs the built gpu-route with these arguments; standard input from /dev/null unless given.
inline CommandResult run_gpu_route(const std::vector<std::string>& arguments,
                                   const std::string& stdin_text = "") {
  const std::string stem = "/tmp/gpu_route_test_" + std::to_string(::getpid());
  std::string command = shell_quote(GPU_ROUTE_BINARY);
  for (const auto& argument : arguments) command += " " + shell_quote(argument);
  if (stdin_text.empty()) {
    command += " </dev/null";
  } else {
    std::ofstream(stem + ".in") << stdin_text;
    command += " <" + stem + ".in";
  }
  command += " >" + stem + ".out 2>" + stem + ".err";
  const int status = std::system(command.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(stem + ".out");
  result.err = read_file(stem + ".err");
  std::remove((stem + ".out").c_str());
  std::remove((stem + ".err").c_str());
  std::remove((stem + ".in").c_str());
  return result;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

}  // namespace gpu_routing::testing
