// The graph as every engine sees it: users' bigint vertex ids mapped to dense int32 indices in
// ascending id order, and the arcs in compressed sparse row form (forward and, on demand,
// reversed). Built in O(V + E) from the plain edge arrays the PostgreSQL layer read.
#pragma once

#include <cstdint>
#include <vector>

#include "base/common.hpp"

namespace gpu_routing {

// A read-only array of the graph: it either owns its elements (a graph built in this process) or
// views memory owned elsewhere (a kept graph's image in shared memory, mapped by this process).
// Engines see the same data()/size()/[] either way.
template <typename T>
class GraphArray {
 public:
  using value_type = T;
  GraphArray() = default;
  GraphArray(std::vector<T> owned)  // NOLINT(google-explicit-constructor): adopts a built vector
      : owned_(std::move(owned)), data_(owned_.data()), size_(owned_.size()) {}
  static GraphArray view(const T* data, std::size_t size) {
    GraphArray array;
    array.data_ = data;
    array.size_ = size;
    return array;
  }
  GraphArray(const GraphArray& other) { *this = other; }
  GraphArray(GraphArray&& other) noexcept { *this = std::move(other); }
  GraphArray& operator=(const GraphArray& other) {
    if (this == &other) return *this;
    owned_ = other.owned_;
    const bool owning = other.data_ == other.owned_.data() && !other.owned_.empty();
    data_ = owning ? owned_.data() : other.data_;
    size_ = other.size_;
    return *this;
  }
  GraphArray& operator=(GraphArray&& other) noexcept {
    if (this == &other) return *this;
    const bool owning = other.data_ == other.owned_.data() && !other.owned_.empty();
    const T* viewed = other.data_;
    owned_ = std::move(other.owned_);
    data_ = owning ? owned_.data() : viewed;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
    return *this;
  }

  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  std::vector<T> owned_;
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

// Edges as read from edges_sql. The arrays belong to the caller (they may live in PostgreSQL
// memory); the graph builder only reads them. A negative or infinite cost means "no arc in that
// direction"; NaN must have been rejected by the reader.
struct EdgeArrays {
  std::size_t count = 0;
  const std::int64_t* ids = nullptr;  // null when edges_sql has no id column (gpu_apsp only)
  const std::int64_t* sources = nullptr;
  const std::int64_t* targets = nullptr;
  const double* costs = nullptr;
  const double* reverse_costs = nullptr;  // null when edges_sql has no reverse_cost column
};

// Dense index <-> user vertex id. Index order is ascending id order, so results emitted in index
// order are sorted by vertex id with no extra sort.
class IdMap {
 public:
  IdMap() = default;
  explicit IdMap(GraphArray<std::int64_t> sorted_unique_ids) : ids_(std::move(sorted_unique_ids)) {}
  VertexIndex size() const { return static_cast<VertexIndex>(ids_.size()); }
  std::int64_t id(VertexIndex index) const { return ids_[static_cast<std::size_t>(index)]; }
  const GraphArray<std::int64_t>& ids() const { return ids_; }
  // kNoVertex when the id is not a vertex of the graph.
  VertexIndex find(std::int64_t id) const;

 private:
  GraphArray<std::int64_t> ids_;
};

// Compressed sparse rows: the arcs leaving vertex v (or, for a reversed graph, arriving at v) are
// row_offsets[v] .. row_offsets[v + 1] - 1. `heads[a]` is the other end of arc a: the target in a
// forward graph, the source in a reversed one.
struct CsrGraph {
  VertexIndex vertex_count = 0;
  GraphArray<ArcIndex> row_offsets;   // vertex_count + 1 entries
  GraphArray<VertexIndex> heads;      // arc_count entries
  GraphArray<double> weights;         // arc_count entries, finite and >= 0
  GraphArray<std::int64_t> edge_ids;  // arc_count entries: the users' edge id of each arc

  ArcIndex arc_count() const { return static_cast<ArcIndex>(heads.size()); }
  ArcIndex begin(VertexIndex v) const { return row_offsets[static_cast<std::size_t>(v)]; }
  ArcIndex end(VertexIndex v) const { return row_offsets[static_cast<std::size_t>(v) + 1]; }
  std::size_t memory_bytes() const;
};

struct Graph {
  IdMap vertices;
  CsrGraph forward;
  CsrGraph reverse;  // empty until ensure_reverse(): predecessors and relax_U need it
  bool directed = true;
  bool integer_weights = true;  // every arc weight is an integer (exact in float64 sums)
  double max_weight = 0.0;      // largest arc weight (0 when there are no arcs)
  double min_weight = 0.0;      // smallest arc weight (0 when there are no arcs)

  VertexIndex vertex_count() const { return vertices.size(); }
  ArcIndex arc_count() const { return forward.arc_count(); }
};

// Builds the graph. Directed: cost >= 0 gives source->target, reverse_cost >= 0 target->source.
// Undirected (pgRouting's rule): each usable cost and reverse_cost gives arcs both ways. Rows with
// no usable direction contribute no vertices. Parallel arcs and self loops are kept: every engine
// handles them, and the predecessor rule picks the cheapest (then smallest id) of parallel arcs.
// Throws kProgramLimit past 2^31 - 1 vertices or arcs.
Graph build_graph(const EdgeArrays& edges, bool directed, const CancelToken& cancel = {});

// Memory the graph built from `edge_count` rows will take at most (for gpu_routing.max_memory).
std::size_t estimate_graph_bytes(std::size_t edge_count, bool directed, bool has_reverse_cost);

// Builds graph.reverse once (no-op when present).
void ensure_reverse(Graph& graph);
bool has_reverse(const Graph& graph);

// The reversed graph: row v lists the arcs arriving at v, heads[] holding their sources. Arc
// weights and edge ids are carried over.
CsrGraph reverse_graph(const CsrGraph& forward);

// A graph as one flat image (a header and every array, the reversed CSR included), so that one
// copy in shared memory can serve every process: write_graph_image() fills `image_bytes(graph)`
// bytes (8-byte aligned); view_graph_image() returns a Graph whose arrays view the image, valid
// while the image stays mapped. Throws kInternal on an image that is not one.
std::size_t graph_image_bytes(const Graph& graph);
void write_graph_image(const Graph& graph, void* image);
Graph view_graph_image(const void* image, std::size_t bytes);

// Sorted, duplicate-free ids of every endpoint (LSD radix sort of int64). Exposed for tests.
std::vector<std::int64_t> sorted_unique_ids(const std::int64_t* a, const std::int64_t* b,
                                            std::size_t count_each);

}  // namespace gpu_routing
