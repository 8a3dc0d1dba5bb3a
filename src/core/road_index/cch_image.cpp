// The hierarchy as flat images: a customized one for shared memory (write_image, view_image)
// and its topology alone, kept beside a kept graph (write_topology_image, from_topology_image).
#include "road_index/cch.hpp"

#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

namespace gpu_routing {

namespace {

// The image: this header, then the arrays in the order below, each starting 8-byte aligned.
struct CchImageHeader {
  std::uint64_t magic;
  std::uint32_t version;
  std::int32_t height;
  std::uint64_t vertices, arcs, input_arcs, fingerprint;
  double build_ms, customization_ms;
};
constexpr std::uint64_t kCchImageMagic = 0x31686363726f7267ULL;  // "grorcch1"
constexpr std::uint32_t kCchImageVersion = 1;

std::size_t aligned(std::size_t bytes) {
  return (bytes + 7) & ~std::size_t{7};
}

// The arrays' sizes in elements and bytes per element, in image order.
std::vector<std::pair<std::size_t, std::size_t>> image_layout(std::size_t n, std::size_t m,
                                                              std::size_t input_arcs) {
  return {{n, sizeof(VertexIndex)},      {n, sizeof(VertexIndex)},  {n, sizeof(VertexIndex)},
          {n + 1, sizeof(ArcIndex)},     {m, sizeof(VertexIndex)},  {m, sizeof(double)},
          {m, sizeof(double)},           {m, sizeof(std::int32_t)}, {m, sizeof(std::int32_t)},
          {input_arcs, sizeof(ArcIndex)}};
}

// The topology image: the same header, then vertex_at_rank, rank_of_vertex, parent, arc_first
// and arc_head. The input arcs' places are left out: they depend on the order of each vertex's
// arcs in the CSR, which an UPDATE changes (it moves the row) without changing the topology.
constexpr std::uint64_t kCchTopologyMagic = 0x31706f74726f7267ULL;  // "grortop1"

std::vector<std::pair<std::size_t, std::size_t>> topology_layout(std::size_t n, std::size_t m) {
  return {{n, sizeof(VertexIndex)},
          {n, sizeof(VertexIndex)},
          {n, sizeof(VertexIndex)},
          {n + 1, sizeof(ArcIndex)},
          {m, sizeof(VertexIndex)}};
}

using Layout = std::vector<std::pair<std::size_t, std::size_t>>;

// The bytes of an image with arrays of `layout` (elements, bytes each).
std::size_t flat_bytes(const Layout& layout) {
  std::size_t total = aligned(sizeof(CchImageHeader));
  for (const auto& [count, size] : layout) total += aligned(count * size);
  return total;
}

// Reads an image's header into `header` after checking its magic (`wrong_kind` says what it is
// not), version and size against `layout_of(header)` (`invalid(what)` makes each error); returns
// where its arrays start, in layout order.
template <typename LayoutOf, typename Invalid>
std::vector<const char*> read_flat(const void* image, std::size_t bytes, std::uint64_t magic,
                                   const char* wrong_kind, LayoutOf layout_of, Invalid invalid,
                                   CchImageHeader* header, Layout* layout) {
  if (bytes < sizeof(CchImageHeader)) throw invalid("too small");
  std::memcpy(header, image, sizeof *header);
  if (header->magic != magic || header->version != kCchImageVersion) throw invalid(wrong_kind);
  *layout = layout_of(*header);
  if (flat_bytes(*layout) != bytes) throw invalid("its size does not match its header");
  std::vector<const char*> arrays;
  const char* at = static_cast<const char*>(image) + aligned(sizeof(CchImageHeader));
  for (const auto& [count, size] : *layout) {
    arrays.push_back(at);
    at += aligned(count * size);
  }
  return arrays;
}

}  // namespace

std::size_t Cch::topology_image_bytes() const {
  return flat_bytes(topology_layout(static_cast<std::size_t>(vertex_count()),
                                    static_cast<std::size_t>(arc_count())));
}

void Cch::write_topology_image(void* out) const {
  const void* arrays[] = {at_rank_.data, rank_.data, parent_span_.data, first_.data, head_.data};
  write_flat(out, kCchTopologyMagic,
             topology_layout(static_cast<std::size_t>(vertex_count()),
                             static_cast<std::size_t>(arc_count())),
             arrays);
}

Cch Cch::from_topology_image(const void* image, std::size_t bytes, const Graph& graph) {
  Stopwatch watch;
  auto invalid = [](const char* what) {
    return RoutingError(ErrorKind::kInvalidParameter,
                        std::string("contraction hierarchy topology image: ") + what);
  };
  CchImageHeader header;
  Layout layout;
  const std::vector<const char*> arrays = read_flat(
      image, bytes, kCchTopologyMagic, "not a topology image of this version",
      [](const CchImageHeader& h) { return topology_layout(h.vertices, h.arcs); }, invalid, &header,
      &layout);
  if (header.vertices != static_cast<std::uint64_t>(graph.vertex_count()))
    throw invalid("made for another number of vertices than the graph's");
  auto next = [&](auto& vector, std::size_t k) {
    using T = typename std::decay_t<decltype(vector)>::value_type;
    const T* data = reinterpret_cast<const T*>(arrays[k]);
    vector.assign(data, data + layout[k].first);
  };
  Cch cch;
  next(cch.vertex_at_rank_, 0);
  next(cch.rank_of_vertex_, 1);
  next(cch.parent_, 2);
  next(cch.arc_first_, 3);
  next(cch.arc_head_, 4);
  cch.elimination_tree_height_ = header.height;
  // Every arc of the graph must lie on a hierarchy arc (find_arc throws kInternal otherwise).
  try {
    cch.map_input_arcs(graph);
  } catch (const RoutingError&) {
    throw invalid("the graph has an arc the hierarchy lacks (another topology)");
  }
  cch.workspace_.resize(graph.vertex_count());
  cch.build_ms_ = watch.elapsed_ms();
  return cch;
}

std::size_t Cch::image_bytes() const {
  return flat_bytes(image_layout(static_cast<std::size_t>(vertex_count()),
                                 static_cast<std::size_t>(arc_count()), input_arc_span_.count));
}

void Cch::write_image(void* out) const {
  require_customized();
  const void* arrays[] = {
      at_rank_.data, rank_.data, parent_span_.data, first_.data,         head_.data,
      up_.data,      down_.data, up_via_span_.data, down_via_span_.data, input_arc_span_.data};
  write_flat(out, kCchImageMagic,
             image_layout(static_cast<std::size_t>(vertex_count()),
                          static_cast<std::size_t>(arc_count()), input_arc_span_.count),
             arrays);
}

void Cch::write_flat(void* out, std::uint64_t magic,
                     const std::vector<std::pair<std::size_t, std::size_t>>& layout,
                     const void* const* arrays) const {
  auto* base = static_cast<char*>(out);
  CchImageHeader header{};
  header.magic = magic;
  header.version = kCchImageVersion;
  header.height = elimination_tree_height_;
  header.vertices = static_cast<std::uint64_t>(vertex_count());
  header.arcs = static_cast<std::uint64_t>(arc_count());
  header.input_arcs = input_arc_span_.count;
  header.fingerprint = fingerprint_;
  header.build_ms = build_ms_;
  header.customization_ms = customization_ms_;
  std::memcpy(base, &header, sizeof header);
  std::size_t at = aligned(sizeof header);
  for (std::size_t k = 0; k < layout.size(); ++k) {
    const std::size_t bytes = layout[k].first * layout[k].second;
    if (bytes > 0) std::memcpy(base + at, arrays[k], bytes);
    at += aligned(bytes);
  }
}

Cch Cch::view_image(const void* image, std::size_t bytes, const Graph& graph, TopologyCheck check) {
  auto invalid = [](const char* what) {
    return RoutingError(ErrorKind::kInternal, std::string("contraction hierarchy image: ") + what);
  };
  if (bytes < sizeof(CchImageHeader) || reinterpret_cast<std::uintptr_t>(image) % 8 != 0)
    throw invalid("too small or misaligned");
  CchImageHeader header;
  Layout layout;
  const std::vector<const char*> arrays = read_flat(
      image, bytes, kCchImageMagic, "not an image of this version",
      [](const CchImageHeader& h) { return image_layout(h.vertices, h.arcs, h.input_arcs); },
      invalid, &header, &layout);
  Cch cch;
  auto next = [&](auto& span, std::size_t k) {
    span.data = reinterpret_cast<decltype(span.data)>(arrays[k]);
    span.count = layout[k].first;
  };
  next(cch.at_rank_, 0);
  next(cch.rank_, 1);
  next(cch.parent_span_, 2);
  next(cch.first_, 3);
  next(cch.head_, 4);
  next(cch.up_, 5);
  next(cch.down_, 6);
  next(cch.up_via_span_, 7);
  next(cch.down_via_span_, 8);
  next(cch.input_arc_span_, 9);
  cch.elimination_tree_height_ = header.height;
  cch.fingerprint_ = header.fingerprint;
  cch.build_ms_ = header.build_ms;
  cch.customization_ms_ = header.customization_ms;
  cch.customized_ = true;
  cch.is_view_ = true;
  const bool same =
      check == TopologyCheck::kFingerprint
          ? cch.same_topology(graph)
          : graph.vertex_count() == cch.vertex_count() &&
                static_cast<std::size_t>(graph.arc_count()) == cch.input_arc_span_.count;
  if (!same) throw invalid("built for another graph than the one it is used with");
  return cch;
}

}  // namespace gpu_routing
