// A customizable contraction hierarchy (CCH; Dibbelt, Strasser, Wagner: "Customizable Contraction
// Hierarchies", 2016): the foundation of the road index of issue 12.
//
// Three phases, each depending on less than the next:
//  1. cch_order(): a contraction order from the topology alone (nested dissection).
//  2. Cch(graph, order): the chordal supergraph of the undirected topology under that order (every
//     vertex's higher-ranked neighbours, with the fill-in that contracting the lower ones adds),
//     stored as upward arcs in CSR form by rank. No weights yet.
//  3. Cch::customize(graph): the graph's current weights on those arcs (lower-triangle relaxation
//     in rank order). Cheap next to 1 and 2, and repeatable whenever the weights change while the
//     topology does not.
// Queries then need no priority queue: one-to-one walks the elimination tree from both ends, and
// one-to-all is PHAST (the same upward walk, then one downward sweep over all ranks), for up to
// eight sources in one sweep and on several threads (cch_sweep.cpp).
//
// Distances equal Dijkstra's exactly when every weight is a whole number (all sums are exact in
// float64 then, in any order). With fractional weights a CCH distance is a sum of the same arc
// weights in another association order, so it may differ from Dijkstra's in the last bits (the
// unit tests allow 1e-9 relative).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/common.hpp"
#include "base/graph.hpp"
#include "road_index/nested_dissection.hpp"

namespace gpu_routing {

// Hierarchies of at least this many ranks are customized on every core by default (Cch::customize).
constexpr VertexIndex kCchParallelRanks = 50000;

class Cch;
namespace gpu {
class CchCustomizer;  // src/core/engine/gpu.hpp: customize() on the GPU
}

// A read-only array: the Cch's own vectors, or a part of a mapped index image (Cch::view_image).
template <typename T>
struct CchSpan {
  const T* data = nullptr;
  std::size_t count = 0;
  std::size_t size() const { return count; }
  const T& operator[](std::size_t i) const { return data[i]; }
  const T* begin() const { return data; }
  const T* end() const { return data + count; }
};

namespace detail {
// A source's upward distance at a rank, for Cch::many_to_all's sweep (the source in lane `lane`).
struct SweepChainEntry {
  VertexIndex rank;
  std::int32_t lane;
  double distance;
};
}  // namespace detail

// The per-query scratch arrays, so that one Cch can serve concurrent queries, one workspace per
// thread. Sized to the vertex count but not filled: a walk reads and writes only the ranks up its
// elimination-tree chain, so it puts those to +infinity before it starts (a few hundred writes)
// instead of keeping every rank at +infinity between queries. Filling 9 MB of arrays on a
// session's first route on New York was 4 ms of a new connection's first call. The PHAST sweep
// and the settling, which read every rank, fill their arrays once (then kept at +infinity).
class CchWorkspace {
 public:
  CchWorkspace() = default;
  explicit CchWorkspace(VertexIndex vertex_count) { resize(vertex_count); }
  void resize(VertexIndex vertex_count);
  // Ranks Cch::settled_distance() has settled since start_settling(), and the upward arcs it read
  // to settle them (their sum is the settling's work: auto prices few paths by it).
  std::size_t settled_count() const { return settled_ranks_.size(); }
  std::int64_t settled_arc_count() const { return settled_arcs_; }

 private:
  friend class Cch;
  template <typename T>
  using Scratch = std::vector<T, UninitializedAllocator<T>>;
  Scratch<double> forward_distance_;   // by rank: from the source, upward arcs only
  Scratch<double> backward_distance_;  // by rank: to the target, downward arcs only
  Scratch<std::int32_t> forward_arc_;  // by rank: the CCH arc that last improved it
  Scratch<std::int32_t> backward_arc_;
  // Whether every rank of forward_distance_ (backward_distance_) holds +infinity between walks.
  bool forward_filled_ = false;
  bool backward_filled_ = false;
  // settled_distance(): by rank, the exact distance, or kUnsettled (kept so between sources;
  // allocated by the first start_settling()); the ranks settled, and the chain being settled.
  // One array for both: a separate flag was one more scattered read a rank.
  static constexpr double kUnsettled = -1.0;  // distances are never negative
  std::vector<double> settled_;
  std::vector<VertexIndex> settled_ranks_;
  std::vector<VertexIndex> settle_chain_;
  std::int64_t settled_arcs_ = 0;
  // Cch::many_to_all(): by rank, the sweep's distances of each source in a lane of its own,
  // interleaved ([rank * lanes + lane], a rank's lanes in one cache line), so that one arc read
  // serves every source. Every rank is written before it is read (by then its neighbours above
  // are final), so nothing keeps it at +infinity; kept for the next sweep (faulting New York's
  // 17 MB for eight lanes in again took 9 ms on the 2-core VM, as long as the sweep), on huge
  // pages where the kernel offers them. lane_distances() gives it 64-byte aligned, `values`
  // doubles at least.
  double* lane_distances(std::size_t values);
  std::vector<double, UninitializedAllocator<double, HugePageAdvisedMemory>> lane_memory_;
  // The sources' upward distances by decreasing rank (the order of the sweep, which starts each
  // rank from them), and one source's upward walk.
  std::vector<detail::SweepChainEntry> sweep_chain_;
  std::vector<std::pair<VertexIndex, double>> reached_;
  // Cch::row_from_buckets(): the walk's ranks that hold a column, with the source's distance.
  std::vector<std::pair<std::int32_t, double>> column_hits_;
  std::vector<std::size_t> first_column_hit_;  // each source's first hit, then the end
};

// The targets of a many-to-many query, spread over the ranks they reach upward (OSRM's buckets):
// for each rank, which targets its downward distances reach and how far. Filled by
// Cch::fill_buckets once per set of targets, then read by any number of sources (threads too).
// Few targets' entries touch a sliver of the ranks: they are then kept sorted by rank (sparse)
// and met by a merge with the source's upward walk, whose ranks only grow, instead of an index
// over every rank (dense), whose filling (New York: three passes over 264,346 ranks) was half of
// a one-pair cost call.
// A rank's bucket becomes a column from kBucketColumnTargets targets on, where it reaches a
// kBucketColumnShare-th of them or more: a column costs a vectorized pass over every target, a
// scattered entry a dependent load and a random store, and on one core of the 2-core VM a
// quarter paid best (New York, 1000 / 3000 / 10,000 targets: rows 25 / 157 / 1,611 ms against
// 32 / 206 / 2,023 ms scattered; a 16th: 27 / 175 / 2,837).
constexpr int kBucketColumnTargets = 64;
constexpr int kBucketColumnShare = 4;
// Cch::rows_from_buckets() reads the columns this many targets (8 kB) at a time.
constexpr std::size_t kBucketColumnPiece = 1024;

class CchBuckets {
 public:
  // The ranks that keep a column (see below).
  std::size_t column_count() const {
    return column_stride_ == 0 ? 0 : columns_.size() / column_stride_;
  }

 private:
  friend class Cch;
  bool sparse_ = false;
  std::vector<std::int64_t> first_;   // dense: by rank, entries first_[r] .. first_[r + 1] - 1
  std::vector<VertexIndex> rank_;     // sparse: each entry's rank, ascending
  std::vector<std::int32_t> target_;  // the target's position in the query's target list
  std::vector<double> distance_;      // from the rank down to that target
  int target_count_ = 0;
  // Dense only: the ranks that reach a large share of the targets (the top separators, which
  // every source's walk meets) keep a column instead: the distance down to every target, by
  // target position (+infinity where the rank does not reach it), column_stride_ values apart.
  // A source adds its distance to a whole column in one vectorized pass, where the same entries
  // scattered one by one cost a dependent load and a random store each (New York, 1000 targets:
  // 93 ranks held 80% of a source's 26,000 entries).
  std::vector<std::int32_t> column_of_;  // by rank: its column, or -1
  std::vector<double, UninitializedAllocator<double, HugePageAdvisedMemory>> columns_;
  std::size_t column_stride_ = 0;
  // Dense only, while filling: each rank's next entry.
  std::vector<std::int64_t, UninitializedAllocator<std::int64_t>> next_;
};

class Cch {
 public:
  Cch() = default;
  // Moving keeps the arrays where they are (the spans stay valid); copying would not.
  Cch(Cch&&) = default;
  Cch& operator=(Cch&&) = default;
  Cch(const Cch&) = delete;
  Cch& operator=(const Cch&) = delete;
  // `order`: the vertex at each rank, a permutation of 0 .. vertex_count - 1 (as cch_order gives).
  // Builds the topology only; customize() before querying. Throws kInvalidParameter on an order
  // that is no permutation, kProgramLimit past 2^31 - 1 CCH arcs.
  Cch(const Graph& graph, std::vector<VertexIndex> order, const CancelToken& cancel = {});

  // Applies the graph's current weights. `graph` must have the topology the Cch was built from
  // (same vertices, same arcs in the same CSR order; weights free): kInvalidParameter otherwise.
  // Callable again after the weights change.
  // `threads`: 0 = every core from kCchParallelRanks ranks on, one thread below; a positive count
  // is used as given, whatever the size. Several threads take disjoint elimination-tree subtrees
  // (their triangles write only arcs leaving their own subtree or the ranks above all of them,
  // "the top", of which each thread writes a private copy), then the copies are merged and the
  // top's ranks relaxed on one thread. The weights and vias are bit-identical for every thread
  // count: where candidates tie, the lowest middle rank wins, as in one increasing sweep.
  void customize(const Graph& graph, const CancelToken& cancel = {}, int threads = 0);
  bool customized() const { return customized_; }
  // Weight arrays on transparent huge pages from the next customization on, for a hierarchy that
  // is customized once and then copied (a kept graph's index, written into shared memory): on the
  // 2-core VM the 4 kB page faults of New York's 37 MB of fresh weights cost about as much as the
  // customization (in SQL 118-123 -> 67-85 ms), but queries answered from huge pages after other
  // work had emptied the caches took 150 us instead of 40 (one-to-one, New York), so a hierarchy
  // that is queried in place keeps ordinary pages.
  void set_huge_pages(bool on) { huge_pages_ = on; }

  // Shortest-path distance from s to t (vertex indices); kInfinity when t is unreachable.
  double distance(VertexIndex s, VertexIndex t, CchWorkspace& workspace) const;
  // The arcs (indices into graph.forward) of a shortest path s -> t in path order; empty when
  // s == t or t is unreachable. Every arc's weight is the one its step costs. Where several paths
  // tie, this one is the hierarchy's pick, not necessarily the predecessor rule's.
  std::vector<ArcIndex> path(VertexIndex s, VertexIndex t, CchWorkspace& workspace) const;
  // distances[v] for every vertex index v from s, by PHAST: one upward walk, then one downward
  // sweep over every rank on this thread (the reference of many_to_all's).
  void one_to_all(VertexIndex s, double* distances, CchWorkspace& workspace) const;
  // PHAST for `count` sources (1 .. kMaxSweepLanes) in one downward sweep, each in a lane of its
  // own: source i's distances into rows[i], for every vertex (rows[i][v]) or, with
  // options.targets, for those alone (rows[i][j] for targets[j]). Each lane's value at each rank
  // is one_to_all's bit for bit: the same candidates (the rank's upward distance, then each
  // upward neighbour's final distance plus the downward weight, in arc order) under the same
  // minimum. Sources may repeat. With options.threads > 1 the sweep goes by the sweep plan for
  // that many threads (made on the first such call and kept): the ranks above every subtree of
  // the split elimination tree first, on this thread, then the subtrees in parallel, since a
  // rank's upward neighbours are all its ancestors. Throws kInvalidParameter for a vertex not in
  // the hierarchy, kInternal for another count, Cancelled when options.cancel asks (before the
  // sweep, then paced by work done).
  static constexpr int kMaxSweepLanes = 8;
  struct SweepOptions {
    int threads = 1;
    CancelToken cancel;
    const VertexIndex* targets = nullptr;  // nullptr: every vertex
    int target_count = 0;
  };
  void many_to_all(const VertexIndex* sources, int count, double* const* rows,
                   CchWorkspace& workspace, const SweepOptions& options) const;
  // How the sweep plan for `threads` splits the ranks (made now if not yet made).
  struct SweepSplit {
    int threads = 1;
    int subtrees = 0;           // swept in parallel, the heaviest handed out first
    int listed_subtrees = 0;    // of them, those whose ranks are no range (swept from a list)
    VertexIndex top_ranks = 0;  // above every subtree, swept first on one thread
    double top_work_share = 0;  // the top's share of the work (upward arcs + 1 a rank)
    double busiest_thread = 0;  // the most work one thread gets when dealt, over the mean
    double plan_ms = 0;         // the time the plan took to make
  };
  SweepSplit sweep_split(int threads) const;
  // One source's exact distances, vertex by vertex as asked: what a path's tracing reads (the
  // path's vertices and their neighbours, trace_strict_path) without a whole row. Each asked
  // rank takes PHAST's downward step from its upward neighbours, which are its elimination-tree
  // ancestors, settled first from the top down: only the ranks those distances depend on are
  // settled, each once, and the values equal one_to_all's exactly. start_settling() walks up from
  // s, settled_distance() answers (kInfinity where unreachable), finish_settling() puts the
  // workspace back for the next source.
  void start_settling(VertexIndex s, CchWorkspace& workspace) const;
  double settled_distance(VertexIndex v, CchWorkspace& workspace) const;
  void finish_settling(VertexIndex s, CchWorkspace& workspace) const;
  // PHAST's first half alone: the ranks s reaches over upward arcs (its elimination-tree
  // ancestors that are reachable) with their upward distances, in increasing rank; the downward
  // sweep then completes every rank (the GPU's PHAST runs that sweep on the device).
  void upward_search(VertexIndex s, std::vector<std::pair<VertexIndex, double>>& reached,
                     CchWorkspace& workspace) const;
  // Many-to-many: fill_buckets() walks each target's elimination-tree ancestors once; then
  // row_from_buckets() gives one source's distances to every target (row[j] for targets[j];
  // kInfinity where unreachable) with one upward walk, whatever the number of targets.
  void fill_buckets(const VertexIndex* targets, int target_count, CchBuckets& buckets,
                    CchWorkspace& workspace) const;
  // The same on `threads` threads, workspaces[k] for thread k (one walk per target each).
  // `column_share`: ranks reaching a column_share-th of the targets or more keep a column (from
  // kBucketColumnTargets targets on); 0 keeps none (the rows are the same either way).
  void fill_buckets(const VertexIndex* targets, int target_count, CchBuckets& buckets,
                    CchWorkspace* const* workspaces, int threads,
                    int column_share = kBucketColumnShare) const;
  void row_from_buckets(VertexIndex s, const CchBuckets& buckets, double* row,
                        CchWorkspace& workspace) const;
  // The same for `count` sources (rows[i] for sources[i]), their buckets' columns read together
  // a piece of the targets at a time: the values are row_from_buckets()'s.
  void rows_from_buckets(const VertexIndex* sources, int count, double* const* rows,
                         const CchBuckets& buckets, CchWorkspace& workspace) const;

  // The same with the Cch's own workspace: one thread at a time.
  double distance(VertexIndex s, VertexIndex t) { return distance(s, t, own_workspace()); }
  std::vector<ArcIndex> path(VertexIndex s, VertexIndex t) { return path(s, t, own_workspace()); }
  void one_to_all(VertexIndex s, double* distances) { one_to_all(s, distances, own_workspace()); }

  // Topology, by rank.
  VertexIndex vertex_count() const { return static_cast<VertexIndex>(at_rank_.count); }
  ArcIndex arc_count() const { return static_cast<ArcIndex>(head_.count); }
  CchSpan<VertexIndex> vertex_at_rank() const { return at_rank_; }
  CchSpan<VertexIndex> rank_of_vertex() const { return rank_; }
  // The lowest-ranked upward neighbour of each rank (kNoVertex for a root): every upward neighbour
  // of a rank is among its ancestors in this tree, which is why the queries only walk up it.
  CchSpan<VertexIndex> elimination_tree_parent() const { return parent_span_; }
  int elimination_tree_height() const { return elimination_tree_height_; }
  // The union of `count` vertices' elimination-tree ancestors (themselves included): the ranks a
  // sweep restricted to them as targets covers (RPHAST), and the upward arcs of those ranks.
  struct Closure {
    VertexIndex ranks = 0;
    std::int64_t arcs = 0;
  };
  // With `in_closure`: sized to the ranks, 1 at each rank of the closure (restrict_sweep_layout's
  // marks), 0 elsewhere.
  Closure ancestor_closure(const VertexIndex* vertices, int count,
                           std::vector<char>* in_closure = nullptr) const;
  // When the GPU's sweeps of a cost matrix keep to its targets' closure (kernels/cch_phast.cu;
  // auto prices them alike): while the closure holds at most this share of the ranks, for a
  // solve of at least this many sources (laying the closure out walks the whole hierarchy once,
  // New York 9-21 ms: more than the sweeps of a few hundred sources save).
  static constexpr double kRestrictedSweepShare = 0.5;
  static constexpr int kRestrictedSweepFromSources = 512;
  // Upward arcs of rank r: arc_first()[r] .. arc_first()[r + 1] - 1, with their higher rank
  // (arc_head) and customized weights in both directions (for engines that copy the hierarchy
  // elsewhere, the GPU's PHAST). Valid once customized.
  CchSpan<ArcIndex> arc_first() const { return first_; }
  CchSpan<VertexIndex> arc_head() const { return head_; }
  CchSpan<double> upward_weights() const { return up_; }
  CchSpan<double> downward_weights() const { return down_; }
  // What each of those weights came from: an arc of the graph (>= 0, an index into
  // graph.forward), a lower triangle's middle rank m (as -2 - m), or nothing (kNoArc, +infinity).
  CchSpan<std::int32_t> upward_vias() const { return up_via_span_; }
  CchSpan<std::int32_t> downward_vias() const { return down_via_span_; }

  // A customized Cch as one flat image (for shared memory): image_bytes() bytes written by
  // write_image() at an 8-byte aligned address. view_image() answers queries straight from such
  // an image (nothing copied; the image must outlive the view, which cannot be customized
  // again); it checks the image's header and that `graph` has the topology it was built from:
  // the whole topology's fingerprint (kFingerprint, a pass over every arc: 1.3 ms on New York),
  // or its vertex and arc counts alone (kCounts) where the caller has paired the image with the
  // graph it was made from itself (a kept graph's form and its index, under the kept graphs'
  // lock).
  enum class TopologyCheck { kFingerprint, kCounts };
  std::size_t image_bytes() const;
  void write_image(void* out) const;
  static Cch view_image(const void* image, std::size_t bytes, const Graph& graph,
                        TopologyCheck check = TopologyCheck::kFingerprint);
  // The topology alone (order, elimination tree, upward arcs, the input arcs' places) as a flat
  // image, for keeping beside a kept graph: after a cost change the new form's index is this
  // topology copied back (milliseconds) and customized, instead of a hierarchy built again
  // (New York: 114 ms). from_topology_image() gives a Cch with its own arrays, not customized;
  // it throws kInvalidParameter when the image is not a topology image or `graph` has an arc
  // the hierarchy lacks (another topology). The caller makes sure the ranks name the same
  // vertices (the same vertex ids in the same order).
  std::size_t topology_image_bytes() const;
  void write_topology_image(void* out) const;
  static Cch from_topology_image(const void* image, std::size_t bytes, const Graph& graph);
  // Whether `graph` has the topology this hierarchy was built from (re-customizable with it).
  bool same_topology(const Graph& graph) const;
  // A hash of the graph's CSR structure (vertices, arc heads; weights left out).
  static std::uint64_t topology_fingerprint(const Graph& graph);

  // Figures for reporting: bytes of every array (the workspace excluded), milliseconds of the
  // topology build and of the latest customization.
  std::size_t memory_bytes() const;
  double build_ms() const { return build_ms_; }
  double customization_ms() const { return customization_ms_; }
  // How the latest customization shared its work (work as estimated from the topology: ranks,
  // arcs, triangles and row scans).
  struct CustomizationSplit {
    int threads = 1;            // threads that took subtrees (1: one sweep, nothing below set)
    int subtrees = 0;           // elimination-tree subtrees handed out
    VertexIndex top_ranks = 0;  // ranks above every subtree, relaxed on one thread at the end
    ArcIndex top_arcs = 0;      // their upward arcs (each thread wrote a private copy)
    double top_work_share = 0;  // the top's share of all work
    double busiest_thread = 0;  // the most work one thread got over the mean (1: even)
  };
  const CustomizationSplit& customization_split() const { return split_; }

 private:
  // What an arc weight came from, for unpacking: an original arc (>= 0, an index into
  // graph.forward), the middle rank m of a triangle (encoded as -2 - m), or nothing (kNoArc).
  static std::int32_t encode_middle(VertexIndex middle_rank) { return -2 - middle_rank; }
  static VertexIndex decode_middle(std::int32_t via) { return -2 - via; }

  CchWorkspace& own_workspace();
  void require_customized() const;
  VertexIndex checked_rank(VertexIndex vertex) const;
  ArcIndex find_arc(VertexIndex lower_rank, VertexIndex higher_rank) const;
  // For each arc of `graph`, the hierarchy arc it lies on, and the graph's fingerprint.
  void map_input_arcs(const Graph& graph);
  // An image: the header (with `magic`), then `arrays`, whose sizes `layout` gives (elements,
  // bytes each), each 8-byte aligned.
  void write_flat(void* out, std::uint64_t magic,
                  const std::vector<std::pair<std::size_t, std::size_t>>& layout,
                  const void* const* arrays) const;
  // What customize() and the GPU's customization (gpu::CchCustomizer, which fills the four weight
  // arrays itself) share: begin_customization() refuses a view (kInternal) and a graph of another
  // topology (kInvalidParameter), marks the hierarchy not customized and sizes the weight arrays
  // (on huge pages when asked; contents undefined); finish_customization() marks it customized
  // with what they hold, taking `ms` as the customization's time.
  friend class gpu::CchCustomizer;
  void begin_customization(const Graph& graph);
  void finish_customization(double ms, const CustomizationSplit& split);
  // Appends the original arcs of one CCH arc's upward (lower -> higher) or downward direction.
  void unpack(ArcIndex arc, bool upward, std::vector<ArcIndex>& out) const;
  // Elimination-tree walks; return the meeting rank (kNoVertex when none). `record_arcs`: keep
  // the arc that set each rank's distance (for a path; a distance alone skips those stores).
  VertexIndex search(VertexIndex source_rank, VertexIndex target_rank, CchWorkspace& ws,
                     double* best, bool record_arcs) const;
  // search()'s walk on a primed workspace: both chains at once in increasing rank, skipping the
  // arcs of ranks already farther than the best total met so far.
  template <bool kRecordArcs>
  VertexIndex pruned_meeting_walk(VertexIndex source_rank, VertexIndex target_rank,
                                  CchWorkspace& ws, double* best) const;
  void clear(VertexIndex source_rank, VertexIndex target_rank, CchWorkspace& ws) const;
  // One upward walk of the elimination tree from `start` (distance[start] = 0) over `weights`
  // (upward or downward arc weights), recording improving arcs in `arc_of` when given; and
  // putting the walked ranks of `distance` back to +infinity.
  template <typename Visit>
  void walk_up(VertexIndex start, CchWorkspace::Scratch<double>& distance,
               const CchSpan<double>& weights, CchWorkspace::Scratch<std::int32_t>* arc_of,
               Visit&& visit) const;
  void reset_walk(VertexIndex start, CchWorkspace::Scratch<double>& distance) const;
  // Before a walk from `start`: the workspace sized, and its ranks up the chain at +infinity
  // where the array is not kept filled.
  void prime_forward(VertexIndex start, CchWorkspace& ws) const;
  void prime_backward(VertexIndex start, CchWorkspace& ws) const;
  // After a walk from `start`: its chain back to +infinity where the array is kept filled
  // (elsewhere the next walk primes its own chain).
  void unwind_forward(VertexIndex start, CchWorkspace& ws) const;
  void unwind_backward(VertexIndex start, CchWorkspace& ws) const;
  // Every rank of forward_distance_ at +infinity from now on (PHAST, settling).
  void fill_forward(CchWorkspace& ws) const;

  std::vector<VertexIndex> vertex_at_rank_;
  std::vector<VertexIndex> rank_of_vertex_;
  std::vector<VertexIndex> parent_;
  int elimination_tree_height_ = 0;

  // Upward arcs of rank r: arc_first_[r] .. arc_first_[r + 1] - 1, heads ascending by rank.
  std::vector<ArcIndex> arc_first_;
  std::vector<VertexIndex> arc_head_;
  // Left uninitialized by resize(), so that a parallel customization writes (and so maps) a fresh
  // hierarchy's pages on every thread at once.
  // Large weight arrays on transparent huge pages (set_huge_pages) where the kernel offers them
  // (madvise mode).
  struct WeightMemory {
    static void* allocate(std::size_t bytes);
    static void free(void* memory, std::size_t bytes) noexcept;
  };
  template <typename T>
  using WeightArray = std::vector<T, UninitializedAllocator<T, WeightMemory>>;
  WeightArray<double> up_weight_;    // lower -> higher
  WeightArray<double> down_weight_;  // higher -> lower
  WeightArray<std::int32_t> up_via_;
  WeightArray<std::int32_t> down_via_;

  // For each arc of graph.forward, the CCH arc it lies on (kNoArc for self loops): customization
  // then needs no search.
  std::vector<ArcIndex> input_arc_to_cch_arc_;
  // What queries read: the vectors above (bind_owned), or an image's arrays (view_image).
  void bind_owned();
  CchSpan<VertexIndex> at_rank_, rank_, parent_span_, head_;
  CchSpan<ArcIndex> first_, input_arc_span_;
  CchSpan<double> up_, down_;
  CchSpan<std::int32_t> up_via_span_, down_via_span_;
  bool is_view_ = false;
  std::uint64_t fingerprint_ = 0;
  bool customized_ = false;
  bool huge_pages_ = false;
  double build_ms_ = 0.0;
  double customization_ms_ = 0.0;
  CustomizationSplit split_;
  // Which ranks each thread customizes: elimination-tree subtrees, the top's ranks left over (a
  // function of the topology and the thread count, so kept for the next customization).
  struct CustomizationPlan {
    int threads = 0;  // 0: none made yet
    // Thread k's ranks, increasing: ranks[first[k]] .. ranks[first[k + 1] - 1]; then the top's,
    // ranks[first[threads]] .. ranks[first[threads + 1] - 1].
    std::vector<VertexIndex> ranks;
    std::vector<std::size_t> first;
    // By rank: -1 below the top; for a top rank v, arc vw lies at vw - top_shift[v] in a thread's
    // private copy of the top's arcs (numbered consecutively, by rank).
    std::vector<ArcIndex> top_shift;
    ArcIndex top_arcs = 0;
    CustomizationSplit split;
  };
  void plan_customization(int threads);
  CustomizationPlan plan_;
  CchWorkspace workspace_;
  // many_to_all's parallel sweep: the top's ranks, decreasing, then the subtrees, the heaviest
  // first. A function of the topology and the thread count, made by the first sweep on that many
  // threads and kept for the Cch's life (the plans of a hierarchy shared by a process's threads,
  // or viewed from a shared image whose arrays are read-only, live beside it, behind a mutex;
  // behind a pointer too, so that the Cch stays movable).
  struct SweepPlan {
    int threads = 0;
    std::vector<VertexIndex> top;  // decreasing
    // A subtree's ranks, decreasing: root, root - 1, .. root - size + 1 where they are a range
    // (list < 0; nested dissection numbers each subtree so), else listed[list .. list + size - 1].
    struct Subtree {
      VertexIndex root;
      VertexIndex size;
      std::int64_t list;
    };
    std::vector<Subtree> subtrees;
    std::vector<VertexIndex> listed;
    SweepSplit split;
  };
  struct SweepPlans {
    std::mutex mutex;
    std::vector<std::unique_ptr<const SweepPlan>> plans;  // never dropped: callers keep references
  };
  const SweepPlan& sweep_plan(int threads) const;
  std::unique_ptr<SweepPlan> make_sweep_plan(int threads) const;
  template <int kLanes>
  void sweep_lanes(const VertexIndex* sources, int count, double* const* rows, CchWorkspace& ws,
                   const SweepOptions& options) const;
  std::unique_ptr<SweepPlans> sweep_plans_ = std::make_unique<SweepPlans>();
};

// A road index made from scratch for `graph` (order, hierarchy, customization on `threads`, 0 =
// the default), for an engine that has no kept graph's index; `note` gets its times and size for
// gpu_routing_last_run().notes.
Cch make_road_index(const Graph& graph, const CancelToken& cancel, int threads, std::string* note);

// The hierarchy's own path s -> t into `arcs` (indices into graph.forward) and its cost, the sum
// of those arcs' weights in path order (kInfinity when t is unreachable; 0 when s == t).
double index_path(const Cch& cch, const Graph& graph, VertexIndex s, VertexIndex t,
                  CchWorkspace& workspace, std::vector<ArcIndex>& arcs);

}  // namespace gpu_routing
