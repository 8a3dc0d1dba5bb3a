// A complete small program on the gpu_routing client (docs/client.md shows it): the route from
// Times Square to JFK airport on the New York network loaded by scripts/load_ny.sh, a cost
// matrix between four places, and what lies within 2 km of Times Square.
// Connection: the PG* environment variables, or the first argument ("host=... dbname=ny").
#include <cstdio>
#include <vector>

#include "gpu_routing/router.hpp"

int main(int argc, char** argv) {
  namespace gr = gpu_routing;
  try {
    gr::RouterOptions options;
    options.timeout = std::chrono::seconds(30);  // statement_timeout of every call
    options.engine.device = "auto";              // GPU where usable, else the CPU engines
    gr::Router router(argc > 1 ? argv[1] : "",
                      gr::EdgeSource::from_table(gr::EdgeTable("ny_edges")), options);

    // Places by coordinates: the nearest vertex of ny_vertices (GiST index on point(lon, lat)).
    const gr::VertexTable vertices("ny_vertices");
    struct Place {
      const char* name;
      double lon, lat;
    };
    const std::vector<Place> places{{"Times Square", -73.9855, 40.7580},
                                    {"JFK airport", -73.7781, 40.6413},
                                    {"Central Park", -73.9654, 40.7829},
                                    {"Brooklyn Bridge", -73.9969, 40.7061}};
    std::vector<gr::VertexId> ids;
    for (const Place& place : places) {
      ids.push_back(router.nearest_vertex(vertices, place.lon, place.lat)->vertex.id);
    }

    // One route, step by step.
    if (const auto route = router.path(ids[0], ids[1])) {
      std::printf("%s -> %s: %.1f km over %zu edges\n", places[0].name, places[1].name,
                  route->cost / 1e4, route->steps.size() - 1);  // DIMACS units: 0.1 m
    } else {
      std::printf("no route\n");
    }

    // A cost matrix, requested in batches with a progress callback.
    gr::MatrixOptions matrix_options;
    matrix_options.batch_sources = 2;
    matrix_options.on_progress = [](const gr::MatrixProgress& p) {
      std::fprintf(stderr, "matrix: %zu/%zu sources\n", p.sources_done, p.sources_total);
    };
    const gr::CostMatrix matrix = router.cost_matrix(ids, matrix_options);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      std::printf("%-16s", places[i].name);
      for (std::size_t j = 0; j < ids.size(); ++j) std::printf(" %6.1f km", matrix.at(i, j) / 1e4);
      std::printf("\n");
    }

    // Everything within 2 km of Times Square (the bound is applied in the database).
    const auto nearby = router.reachable(ids[0], 20000);
    std::printf("%zu vertices within 2 km of Times Square\n", nearby.size());

    if (const auto run = router.last_run()) {
      std::printf("last call: %s on %s, %.0f ms\n", run->function.c_str(), run->device.c_str(),
                  run->total_ms);
    }
    return 0;
  } catch (const gr::TimeoutError& error) {
    std::fprintf(stderr, "timed out: %s\n", error.what());
  } catch (const gr::ConnectionError& error) {
    std::fprintf(stderr, "cannot reach the database: %s\n", error.what());
  } catch (const gr::Error& error) {
    std::fprintf(stderr, "server error %s: %s\n", error.sqlstate().c_str(), error.what());
  }
  return 1;
}
