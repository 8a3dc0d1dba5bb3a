// The result store (see result_store.hpp) and the memory context its tuples live in.
// Core's plain C++ goes before the PostgreSQL headers result_store.hpp brings in.
#include "base/common.hpp"
#include "result_store.hpp"
#include "retained_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older C libraries' headers lack it
#endif

extern "C" {
#include "nodes/memnodes.h"
}

namespace gpu_routing::pg {

namespace {

#if PG_VERSION_NUM < 160000
// ---------------------------------------------------------------------------------------------
// The row arena: a memory context for result tuples, written against PostgreSQL 15's context
// interface (MemoryContextMethods; every chunk preceded by its context's pointer).
//
// Chunks are cut one after another from blocks that are mapped populated: the pages arrive in
// one system call per block rather than one page fault per page, which was a third of the time
// of writing 16.8M rows; blocks of 2 MB and up on transparent huge pages (map_on_huge_pages). A
// chunk costs a 16-byte header and its size rounded to 8 bytes (no power-of-two classes). Each
// block counts its live chunks and is unmapped when the last one is freed, as PostgreSQL's
// generation context does, so the patterns of a tuplestore keep memory bounded: all tuples freed
// together (in memory), each freed right after being written (spilled to disk, where the current
// block is rewound instead), or freed one behind the next (read back from disk). Chunks above
// kLargeChunkBytes (the tuplestore's growing pointer array) get a mapping of their own, which
// repalloc grows with mremap instead of copying.

struct ArenaBlock {
  ArenaBlock* prev;
  ArenaBlock* next;
  std::size_t mapped_bytes;  // the whole mapping, this header included
  std::size_t live_chunks;
  char* free_ptr;  // where the next chunk starts (regular blocks)
  char* end;
  bool large;      // holds one chunk of its own
  bool populated;  // mapped populated (may be kept between calls)
};

// Directly before every chunk. PostgreSQL 15 finds a chunk's context in the 8 bytes before it.
struct ArenaChunk {
  std::uint32_t size;          // usable bytes; 0 for the chunk of a large block
  std::uint32_t block_offset;  // bytes from the block's start to this header
  MemoryContext context;
};

struct ArenaContext {
  MemoryContextData header;  // first: this is what PostgreSQL sees
  ArenaBlock* blocks;        // every block, newest first
  ArenaBlock* current;       // where regular chunks are cut from
  std::size_t next_block_bytes;
  std::size_t live_chunks;
  // Batches of rows handed to a writer (alloc_cost_array_rows) whose block is not linked yet:
  // nothing of it is written here before its first row is stored, so that its pages are the
  // writer's to fault in.
  struct PendingBatch {
    char* memory;
    std::size_t mapped_bytes;
    std::size_t row_bytes;  // a chunk's header and its tuple
    int rows;
  } pending[8];
  int pending_count;
};

constexpr std::size_t kBlockHeaderBytes = MAXALIGN(sizeof(ArenaBlock));
constexpr std::size_t kChunkHeaderBytes = MAXALIGN(sizeof(ArenaChunk));
constexpr std::size_t kFirstBlockBytes = std::size_t{64} << 10;
constexpr std::size_t kMaxBlockBytes = std::size_t{16} << 20;
constexpr std::size_t kLargeChunkBytes = std::size_t{256} << 10;
static_assert(sizeof(ArenaChunk) == 16, "the context pointer must end the chunk header");
static_assert(kLargeChunkBytes + kChunkHeaderBytes + kBlockHeaderBytes <= kFirstBlockBytes * 8,
              "a regular chunk must fit a block of the sizes used");

std::size_t page_round(std::size_t bytes) {
  const std::size_t page = 4096;
  return (bytes + page - 1) / page * page;
}

ArenaChunk* chunk_of(void* pointer) {
  return reinterpret_cast<ArenaChunk*>(static_cast<char*>(pointer) - kChunkHeaderBytes);
}
ArenaBlock* block_of(ArenaChunk* chunk) {
  return reinterpret_cast<ArenaBlock*>(reinterpret_cast<char*>(chunk) - chunk->block_offset);
}
char* first_chunk(ArenaBlock* block) {
  return reinterpret_cast<char*>(block) + kBlockHeaderBytes;
}

void link_block(ArenaContext* arena, ArenaBlock* block) {
  block->prev = nullptr;
  block->next = arena->blocks;
  if (arena->blocks != nullptr) arena->blocks->prev = block;
  arena->blocks = block;
  arena->header.mem_allocated += block->mapped_bytes;
}

void unlink_block(ArenaContext* arena, ArenaBlock* block) {
  if (block->prev != nullptr)
    block->prev->next = block->next;
  else
    arena->blocks = block->next;
  if (block->next != nullptr) block->next->prev = block->prev;
  arena->header.mem_allocated -= block->mapped_bytes;
}

// A block of 2 MB or more: placed on a 2 MB boundary and advised to transparent huge pages, then
// populated (unless its writer is to fault it in). Writing 16.8M rows (1.1 GB of blocks) on 4 kB
// pages spent 0.6-1.4 s of the backend's time in the kernel (a fault's bookkeeping and a page
// cleared per 4 kB, and 0.1 s unmapping); on 2 MB pages 0.2 s, unmapping in 4 ms (the 2-core
// development machine). Where transparent huge pages are off ("never") the advice is ignored and
// the block is populated on 4 kB pages as before; kernels before 5.14 (no MADV_POPULATE_WRITE)
// fault them in as written.
void* map_on_huge_pages(std::size_t bytes, bool populate) {
  char* raw = static_cast<char*>(mmap(nullptr, bytes + kHugePageBytes, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (raw == MAP_FAILED) return MAP_FAILED;
  char* start = reinterpret_cast<char*>(huge_page_ceil(reinterpret_cast<std::uintptr_t>(raw)));
  // The extra huge page's bytes lie before the boundary (head) and after the block (the rest,
  // never empty as head < kHugePageBytes).
  const std::size_t head = static_cast<std::size_t>(start - raw);
  if (head > 0) munmap(raw, head);
  munmap(start + bytes, kHugePageBytes - head);
  madvise(start, bytes, MADV_HUGEPAGE);
  if (populate) madvise(start, bytes, MADV_POPULATE_WRITE);
  return start;
}

// Populated blocks kept by this process between calls, up to gpu_routing.retained_memory
// together (and one first-size block always): a call of a few rows (a path on a city) otherwise
// mapped, populated and unmapped 64 kB of fresh pages, 12% of the backend's time in a pgbench of
// paths on Rome's road index, and a New York tree as an array populated two 2 MB huge pages a
// call (the 2-core development machine). Unpopulated blocks (large chunks under 2 MB, which
// repalloc grows by mremap) are not kept.
constexpr int kMostKeptBlocks = 64;
struct KeptBlock {
  void* memory;
  std::size_t bytes;
};
KeptBlock g_kept_blocks[kMostKeptBlocks];
int g_kept_count = 0;
std::size_t g_kept_bytes = 0;

// The smallest kept block of at least `bytes` and at most an eighth more, or nullptr. (A large
// chunk's space is its block's: a much larger block would count against work_mem as such.)
void* take_kept_block(std::size_t bytes, std::size_t* mapped_bytes) {
  int best = -1;
  for (int i = 0; i < g_kept_count; ++i) {
    const std::size_t size = g_kept_blocks[i].bytes;
    if (size >= bytes && size - bytes <= bytes / 8 &&
        (best < 0 || size < g_kept_blocks[best].bytes))
      best = i;
  }
  if (best < 0) return nullptr;
  void* memory = g_kept_blocks[best].memory;
  *mapped_bytes = g_kept_blocks[best].bytes;
  g_kept_bytes -= *mapped_bytes;
  g_kept_blocks[best] = g_kept_blocks[--g_kept_count];
  return memory;
}

// Keeps a freed populated block where the setting leaves room; false: unmap it.
bool keep_block(void* memory, std::size_t bytes) {
  const std::size_t room = std::max(kFirstBlockBytes, retained_memory_bytes());
  // A lowered setting: the oldest kept blocks go first.
  while (g_kept_count > 0 && g_kept_bytes > room) {
    munmap(g_kept_blocks[0].memory, g_kept_blocks[0].bytes);
    g_kept_bytes -= g_kept_blocks[0].bytes;
    g_kept_blocks[0] = g_kept_blocks[--g_kept_count];
  }
  if (g_kept_count == kMostKeptBlocks || g_kept_bytes + bytes > room) return false;
  g_kept_blocks[g_kept_count++] = {memory, bytes};
  g_kept_bytes += bytes;
  return true;
}

ArenaBlock* map_block(std::size_t bytes, bool populate) {
  void* memory = populate ? take_kept_block(bytes, &bytes) : nullptr;
  if (memory == nullptr) {
    memory = populate && bytes >= kHugePageBytes
                 ? map_on_huge_pages(bytes, true)
                 : mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
    if (memory == MAP_FAILED) return nullptr;
  }
  ArenaBlock* block = static_cast<ArenaBlock*>(memory);
  block->mapped_bytes = bytes;
  block->live_chunks = 0;
  block->free_ptr = first_chunk(block);
  block->end = static_cast<char*>(memory) + bytes;
  block->large = false;
  block->populated = populate;
  return block;
}

void unmap_block(ArenaContext* arena, ArenaBlock* block) {
  if (arena->current == block) arena->current = nullptr;
  unlink_block(arena, block);
  if (block->populated && keep_block(block, block->mapped_bytes)) return;
  munmap(block, block->mapped_bytes);
}

void* arena_alloc_large(ArenaContext* arena, Size size) {
  const std::size_t bytes = page_round(kBlockHeaderBytes + kChunkHeaderBytes + size);
  // Under 2 MB not populated: repalloc may grow it by mremap (the tuplestore's pointer array),
  // and its pages are written in order anyway. From 2 MB on (a tuple of a New York tree as an
  // array) on huge pages, populated: 4 kB faults were half the time of writing such rows (the
  // development machine, 64 trees).
  ArenaBlock* block = map_block(bytes, bytes >= kHugePageBytes);
  if (block == nullptr) return nullptr;
  block->large = true;
  block->live_chunks = 1;
  link_block(arena, block);
  ArenaChunk* chunk = reinterpret_cast<ArenaChunk*>(first_chunk(block));
  chunk->size = 0;
  chunk->block_offset = static_cast<std::uint32_t>(kBlockHeaderBytes);
  chunk->context = &arena->header;
  arena->live_chunks += 1;
  return reinterpret_cast<char*>(chunk) + kChunkHeaderBytes;
}

void* arena_alloc(MemoryContext context, Size size) {
  ArenaContext* arena = reinterpret_cast<ArenaContext*>(context);
  if (size > kLargeChunkBytes) return arena_alloc_large(arena, size);
  const std::size_t usable = MAXALIGN(size);
  const std::size_t needed = kChunkHeaderBytes + usable;
  ArenaBlock* block = arena->current;
  if (block == nullptr || static_cast<std::size_t>(block->end - block->free_ptr) < needed) {
    std::size_t bytes = arena->next_block_bytes;
    while (bytes < kBlockHeaderBytes + needed) bytes *= 2;
    block = map_block(bytes, true);
    if (block == nullptr) return nullptr;
    link_block(arena, block);
    // A block left behind is unmapped once its last chunk is freed; an empty one goes now.
    if (arena->current != nullptr && arena->current->live_chunks == 0)
      unmap_block(arena, arena->current);
    arena->current = block;
    arena->next_block_bytes = std::min(bytes * 2, kMaxBlockBytes);
  }
  ArenaChunk* chunk = reinterpret_cast<ArenaChunk*>(block->free_ptr);
  chunk->size = static_cast<std::uint32_t>(usable);
  chunk->block_offset =
      static_cast<std::uint32_t>(reinterpret_cast<char*>(chunk) - reinterpret_cast<char*>(block));
  chunk->context = context;
  block->free_ptr += needed;
  block->live_chunks += 1;
  arena->live_chunks += 1;
  return reinterpret_cast<char*>(chunk) + kChunkHeaderBytes;
}

void arena_free(MemoryContext context, void* pointer) {
  ArenaContext* arena = reinterpret_cast<ArenaContext*>(context);
  ArenaChunk* chunk = chunk_of(pointer);
  ArenaBlock* block = block_of(chunk);
  arena->live_chunks -= 1;
  block->live_chunks -= 1;
  if (block->live_chunks > 0) return;
  if (block == arena->current) {
    block->free_ptr = first_chunk(block);  // rewound: a spilling tuplestore reuses it row by row
    return;
  }
  unmap_block(arena, block);
}

void* arena_realloc(MemoryContext context, void* pointer, Size size) {
  ArenaContext* arena = reinterpret_cast<ArenaContext*>(context);
  ArenaChunk* chunk = chunk_of(pointer);
  if (chunk->size == 0) {
    ArenaBlock* block = block_of(chunk);
    const std::size_t bytes = page_round(kBlockHeaderBytes + kChunkHeaderBytes + size);
    if (bytes == block->mapped_bytes) return pointer;
    ArenaBlock* prev = block->prev;
    ArenaBlock* next = block->next;
    const std::size_t old_bytes = block->mapped_bytes;
    void* moved = mremap(block, old_bytes, bytes, MREMAP_MAYMOVE);
    if (moved == MAP_FAILED) return nullptr;  // the old chunk stays valid, as repalloc expects
    block = static_cast<ArenaBlock*>(moved);
    block->mapped_bytes = bytes;
    block->end = static_cast<char*>(moved) + bytes;
    block->prev = prev;
    block->next = next;
    if (prev != nullptr)
      prev->next = block;
    else
      arena->blocks = block;
    if (next != nullptr) next->prev = block;
    arena->header.mem_allocated += bytes;
    arena->header.mem_allocated -= old_bytes;
    return first_chunk(block) + kChunkHeaderBytes;
  }
  if (size <= chunk->size) return pointer;
  void* grown = arena_alloc(context, size);
  if (grown == nullptr) return nullptr;
  memcpy(grown, pointer, chunk->size);
  arena_free(context, pointer);
  return grown;
}

// The thread that may be writing into this process's arena chunks (alloc_cost_array_rows), and
// how to wait for it.
struct RowWriter {
  MemoryContext arena = nullptr;
  void (*wait)(void*) = nullptr;
  void* arg = nullptr;
};
RowWriter g_row_writer;

void arena_reset(MemoryContext context) {
  // Rows handed to a writer and not yet stored (an error between) are unmapped below only once
  // the writer is done with them: on an error the call's own cleanup may come after this.
  if (g_row_writer.arena == context) {
    const RowWriter writer = g_row_writer;
    g_row_writer = RowWriter();
    writer.wait(writer.arg);
  }
  ArenaContext* arena = reinterpret_cast<ArenaContext*>(context);
  while (arena->blocks != nullptr) unmap_block(arena, arena->blocks);
  for (int i = 0; i < arena->pending_count; ++i)
    munmap(arena->pending[i].memory, arena->pending[i].mapped_bytes);
  arena->pending_count = 0;
  arena->current = nullptr;
  arena->next_block_bytes = kFirstBlockBytes;
  arena->live_chunks = 0;
}

// A batch of `count` tuples of `tuple_bytes` each for a writer (alloc_cost_array_rows): one
// mapping, on huge pages where it is 2 MB or more (or a kept block), with chunks back to back
// after the block's header. Nothing of it is written here: the writer's threads fault its pages
// in (in parallel; the backend's own faults or populating were the floor of big answers), and
// the block's and each chunk's header are written when the row is stored
// (arena_store_writer_chunk), onto pages the writer has brought in. false: no room for another
// pending batch, or no memory.
bool arena_writer_batch(MemoryContext context, int count, std::size_t tuple_bytes, char** tuples) {
  ArenaContext* arena = reinterpret_cast<ArenaContext*>(context);
  constexpr int kMostPending = static_cast<int>(sizeof arena->pending / sizeof arena->pending[0]);
  if (arena->pending_count == kMostPending || count <= 0) return false;
  const std::size_t row_bytes = kChunkHeaderBytes + MAXALIGN(tuple_bytes);
  if (row_bytes > UINT32_MAX) return false;  // a chunk's size is 32 bits
  std::size_t bytes = page_round(kBlockHeaderBytes + row_bytes * static_cast<std::size_t>(count));
  if (bytes > UINT32_MAX) return false;  // so is a chunk's offset in its block
  void* memory = take_kept_block(bytes, &bytes);
  if (memory == nullptr) {
    memory = bytes >= kHugePageBytes
                 ? map_on_huge_pages(bytes, false)
                 : mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return false;
  }
  char* first = static_cast<char*>(memory) + kBlockHeaderBytes;
  for (int i = 0; i < count; ++i)
    tuples[i] = first + static_cast<std::size_t>(i) * row_bytes + kChunkHeaderBytes;
  arena->pending[arena->pending_count++] = {static_cast<char*>(memory), bytes, row_bytes, count};
  return true;
}

// Makes `tuple` (from arena_writer_batch) a chunk of the arena: its batch's block linked on its
// first row, its header written. The tuplestore then frees it as any chunk.
void arena_store_writer_chunk(MemoryContext context, char* tuple) {
  ArenaContext* arena = reinterpret_cast<ArenaContext*>(context);
  ArenaChunk* chunk = chunk_of(tuple);
  for (int i = 0; i < arena->pending_count; ++i) {
    ArenaContext::PendingBatch& batch = arena->pending[i];
    if (tuple < batch.memory || tuple >= batch.memory + batch.mapped_bytes) continue;
    ArenaBlock* block = reinterpret_cast<ArenaBlock*>(batch.memory);
    block->mapped_bytes = batch.mapped_bytes;
    block->live_chunks = static_cast<std::size_t>(batch.rows);
    block->end = batch.memory + batch.mapped_bytes;
    block->free_ptr = block->end;  // nothing more is cut from it
    block->large = false;
    block->populated = true;  // its pages are there: keepable
    link_block(arena, block);
    arena->live_chunks += static_cast<std::size_t>(batch.rows);
    // Every chunk's header at once: a row stored while another is not (an error between)
    // still frees as a chunk of this block.
    for (int r = 0; r < batch.rows; ++r) {
      ArenaChunk* each = reinterpret_cast<ArenaChunk*>(
          batch.memory + kBlockHeaderBytes + static_cast<std::size_t>(r) * batch.row_bytes);
      each->size = static_cast<std::uint32_t>(batch.row_bytes - kChunkHeaderBytes);
      each->block_offset = static_cast<std::uint32_t>(reinterpret_cast<char*>(each) - batch.memory);
      each->context = context;
    }
    arena->pending[i] = arena->pending[--arena->pending_count];
    break;
  }
  if (chunk->context != context)
    elog(ERROR, "gpu_routing: a result row was not made by this result store");
}

void arena_delete(MemoryContext context) {
  arena_reset(context);
  free(context);
}

Size arena_chunk_space(MemoryContext, void* pointer) {
  ArenaChunk* chunk = chunk_of(pointer);
  if (chunk->size == 0) return block_of(chunk)->mapped_bytes;
  return chunk->size + kChunkHeaderBytes;
}

bool arena_is_empty(MemoryContext context) {
  return reinterpret_cast<ArenaContext*>(context)->live_chunks == 0;
}

void arena_stats(MemoryContext context, MemoryStatsPrintFunc printfunc, void* passthru,
                 MemoryContextCounters* totals, bool print_to_stderr) {
  ArenaContext* arena = reinterpret_cast<ArenaContext*>(context);
  std::size_t blocks = 0, total = 0, free_bytes = 0;
  for (ArenaBlock* b = arena->blocks; b != nullptr; b = b->next) {
    blocks += 1;
    total += b->mapped_bytes;
    if (!b->large) free_bytes += static_cast<std::size_t>(b->end - b->free_ptr);
  }
  if (printfunc != nullptr) {
    char text[200];
    snprintf(text, sizeof text, "%zu total in %zu blocks; %zu free; %zu used; %zu chunks", total,
             blocks, free_bytes, total - free_bytes, arena->live_chunks);
    printfunc(context, passthru, text, print_to_stderr);
  }
  if (totals != nullptr) {
    totals->nblocks += blocks;
    totals->totalspace += total;
    totals->freespace += free_bytes;
  }
}

#ifdef MEMORY_CONTEXT_CHECKING
void arena_check(MemoryContext) {}
#endif

const MemoryContextMethods kArenaMethods = {
    arena_alloc,  arena_free,        arena_realloc,  arena_reset,
    arena_delete, arena_chunk_space, arena_is_empty, arena_stats,
#ifdef MEMORY_CONTEXT_CHECKING
    arena_check,
#endif
};

MemoryContext create_row_arena(MemoryContext parent) {
  ArenaContext* arena = static_cast<ArenaContext*>(malloc(sizeof(ArenaContext)));
  if (arena == nullptr)
    ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory"),
                    errdetail("Failed while creating the gpu_routing result row context.")));
  memset(arena, 0, sizeof *arena);
  arena->next_block_bytes = kFirstBlockBytes;
  // PostgreSQL 15 accepts only its own context tags as valid; the methods are what it calls.
  MemoryContextCreate(&arena->header, T_GenerationContext, &kArenaMethods, parent,
                      "gpu_routing result rows");
  return &arena->header;
}
#else
// Later versions keep a chunk's context elsewhere; a generation context packs tuples as tightly.
MemoryContext create_row_arena(MemoryContext parent) {
  return GenerationContextCreate(parent, "gpu_routing result rows", ALLOCSET_DEFAULT_SIZES);
}
#endif

// One arena per call site (FmgrInfo), created on its first call and kept in fn_extra: a function
// called once per outer row (LATERAL) reuses the memory of the previous call's result, which the
// executor has ended by then, instead of leaving a context behind per call.
MemoryContext row_arena(FunctionCallInfo fcinfo) {
  FmgrInfo* flinfo = fcinfo->flinfo;
  if (flinfo->fn_extra == nullptr) flinfo->fn_extra = create_row_arena(flinfo->fn_mcxt);
  return static_cast<MemoryContext>(flinfo->fn_extra);
}

}  // namespace

void check_result_context(FunctionCallInfo fcinfo) {
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  if (rsinfo == nullptr || !IsA(rsinfo, ReturnSetInfo))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("set-valued function called in context that cannot accept a set")));
  if (!(rsinfo->allowedModes & SFRM_Materialize) || rsinfo->expectedDesc == nullptr)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("materialize mode required, but it is not allowed in this context")));
}

MemoryContext create_result_arena(MemoryContext parent) {
  return create_row_arena(parent);
}

ResultStore* make_result_store(TupleDesc expected, MemoryContext arena, bool random_access,
                               std::size_t rows_in_memory_bytes) {
  ResultStore* result = static_cast<ResultStore*>(palloc0(sizeof(ResultStore)));
  result->desc = CreateTupleDescCopy(expected);
  result->arena = arena;
  TupleDesc desc = result->desc;

  // The fast path needs every column fixed-width and by value; the offsets are those
  // heap_fill_tuple uses for a row without NULLs.
  result->columns = desc->natts;
  bool fixed = desc->natts > 0 && desc->natts <= kMaxResultColumns;
  int offset = 0;
  for (int c = 0; fixed && c < desc->natts; ++c) {
    Form_pg_attribute attribute = TupleDescAttr(desc, c);
    if (attribute->attisdropped || !attribute->attbyval || attribute->attlen <= 0 ||
        attribute->attlen > static_cast<int>(sizeof(Datum))) {
      fixed = false;
      break;
    }
    offset = static_cast<int>(att_align_nominal(offset, attribute->attalign));
    result->offsets[c] = static_cast<int16>(offset);
    result->lengths[c] = attribute->attlen;
    offset += attribute->attlen;
  }
  if (fixed) {
    Datum zeros[kMaxResultColumns] = {0};
    bool nulls[kMaxResultColumns] = {false};
    HeapTuple tuple = heap_form_tuple(desc, zeros, nulls);
    // Trust the offsets only where the formed tuple has exactly the expected layout.
    if (!HeapTupleHasNulls(tuple) && !HeapTupleHasVarWidth(tuple) &&
        tuple->t_len == static_cast<uint32>(tuple->t_data->t_hoff + offset)) {
      result->row_template = tuple;
      result->template_data = reinterpret_cast<char*>(tuple->t_data) + tuple->t_data->t_hoff;
      result->fixed_layout = true;
    }
  }

  // Past this the tuplestore writes rows to a temporary file: a result of any size holds at most
  // this much memory.
  const int rows_in_memory_kb = static_cast<int>(
      std::max<std::size_t>(64, std::min<std::size_t>(rows_in_memory_bytes / 1024, INT_MAX)));
  MemoryContext old = MemoryContextSwitchTo(arena);
  result->store = tuplestore_begin_heap(random_access, false, rows_in_memory_kb);
  MemoryContextSwitchTo(old);
  return result;
}

namespace {

// Where a (bigint, float8[]) row's parts lie from its header on, as heap_form_tuple lays out a row
// without NULLs: the header, then each column at its alignment (the array keeps its 4-byte
// varlena header: it is far too long for a short one). The same for every width.
struct CostArrayLayout {
  Size hoff, id_offset, array_offset;
  Size costs_offset() const { return hoff + array_offset + ARR_OVERHEAD_NONULLS(1); }
};

CostArrayLayout cost_array_layout(char id_align, char array_align) {
  CostArrayLayout layout;
  layout.hoff = MAXALIGN(offsetof(HeapTupleHeaderData, t_bits));
  layout.id_offset = att_align_nominal(0, id_align);
  layout.array_offset = att_align_nominal(layout.id_offset + sizeof(int64), array_align);
  return layout;
}

// Whether a result's rows are (bigint, float8[]) (both aligned to 8, as those types always are).
bool is_cost_array_desc(TupleDesc desc) {
  return desc->natts == 2 && TupleDescAttr(desc, 0)->atttypid == INT8OID &&
         TupleDescAttr(desc, 1)->atttypid == FLOAT8ARRAYOID &&
         TupleDescAttr(desc, 0)->attalign == TYPALIGN_DOUBLE &&
         TupleDescAttr(desc, 1)->attalign == TYPALIGN_DOUBLE;
}

// A (bigint, float8[]) row's header from `header` on (zeroed by the caller up to its costs):
// the header's attribute count, data offset and flags, and the array's own header for `width`
// costs. The row's id and costs are the caller's to write. Returns the array.
ArrayType* write_cost_array_header(HeapTupleHeader header, const CostArrayLayout& layout,
                                   std::size_t width) {
  HeapTupleHeaderSetNatts(header, 2);
  header->t_hoff = static_cast<uint8>(layout.hoff);
  header->t_infomask = HEAP_HASVARWIDTH;
  auto* array = reinterpret_cast<ArrayType*>(reinterpret_cast<char*>(header) + layout.hoff +
                                             layout.array_offset);
  SET_VARSIZE(array, ARR_OVERHEAD_NONULLS(1) + width * sizeof(double));
  array->ndim = 1;
  array->dataoffset = 0;
  array->elemtype = FLOAT8OID;
  *ARR_DIMS(array) = static_cast<int>(width);
  *ARR_LBOUND(array) = 1;
  return array;
}

}  // namespace

HeapTuple make_cost_array_row(const ResultStore* result, std::size_t width, int64** start_vid,
                              double** costs) {
  const TupleDesc desc = result->desc;
  if (!is_cost_array_desc(desc))
    elog(ERROR, "gpu_routing: a cost array row must be (bigint, float8[])");
  const Size array_bytes = ARR_OVERHEAD_NONULLS(1) + width * sizeof(double);
  const CostArrayLayout layout = cost_array_layout(TYPALIGN_DOUBLE, TYPALIGN_DOUBLE);
  const Size hoff = layout.hoff;
  const Size id_offset = layout.id_offset;
  const Size array_offset = layout.array_offset;
  const Size length = hoff + array_offset + array_bytes;
  if (!AllocSizeIsValid(HEAPTUPLESIZE + length))
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("a cost array of %zu targets exceeds PostgreSQL's 1 GB limit", width)));
  auto* tuple = static_cast<HeapTuple>(palloc(HEAPTUPLESIZE + length));
  memset(tuple, 0, HEAPTUPLESIZE + hoff + array_offset + ARR_OVERHEAD_NONULLS(1));
  tuple->t_len = static_cast<uint32>(length);
  ItemPointerSetInvalid(&tuple->t_self);
  tuple->t_tableOid = InvalidOid;
  HeapTupleHeader header =
      reinterpret_cast<HeapTupleHeader>(reinterpret_cast<char*>(tuple) + HEAPTUPLESIZE);
  tuple->t_data = header;
  HeapTupleHeaderSetDatumLength(header, length);
  HeapTupleHeaderSetTypeId(header, desc->tdtypeid);
  HeapTupleHeaderSetTypMod(header, desc->tdtypmod);
  ArrayType* costs_array = write_cost_array_header(header, layout, width);
  char* data = reinterpret_cast<char*>(header) + hoff;
  // The tuple as PostgreSQL reads it must find the array where it was written.
  bool is_null = true;
  const Datum read = heap_getattr(tuple, 2, desc, &is_null);
  if (is_null || DatumGetPointer(read) != reinterpret_cast<Pointer>(costs_array))
    elog(ERROR, "gpu_routing: a cost array row's layout is not the one PostgreSQL reads");
  *start_vid = reinterpret_cast<int64*>(data + id_offset);
  *costs = reinterpret_cast<double*>(ARR_DATA_PTR(costs_array));
  return tuple;
}

namespace {

// A slot that hands the tuplestore a minimal tuple already formed in its own memory context
// (tuplestore_puttupleslot() asks the slot for a copy "palloc'd in the current memory context",
// the tuplestore's, which is the row arena: the tuple is one of its chunks, so it is given as
// it is instead of copied). Nothing reads it: it only stores.
struct AdoptingSlot {
  TupleTableSlot base;
  MinimalTuple tuple;
};

void adopting_init(TupleTableSlot*) {}
void adopting_release(TupleTableSlot*) {}
void adopting_clear(TupleTableSlot* slot) {
  reinterpret_cast<AdoptingSlot*>(slot)->tuple = nullptr;
  slot->tts_nvalid = 0;
  slot->tts_flags |= TTS_FLAG_EMPTY;
}
void adopting_getsomeattrs(TupleTableSlot*, int) {
  elog(ERROR, "gpu_routing: a result row being stored cannot be read");
}
Datum adopting_getsysattr(TupleTableSlot*, int, bool*) {
  elog(ERROR, "gpu_routing: a result row being stored has no system attributes");
  return 0;
}
void adopting_materialize(TupleTableSlot*) {}
void adopting_copyslot(TupleTableSlot*, TupleTableSlot*) {
  elog(ERROR, "gpu_routing: a result row being stored cannot be copied into");
}
HeapTuple adopting_copy_heap_tuple(TupleTableSlot*) {
  elog(ERROR, "gpu_routing: a result row being stored has no heap tuple");
  return nullptr;
}
MinimalTuple adopting_copy_minimal_tuple(TupleTableSlot* slot) {
  AdoptingSlot* adopting = reinterpret_cast<AdoptingSlot*>(slot);
  MinimalTuple tuple = adopting->tuple;
  if (tuple == nullptr) elog(ERROR, "gpu_routing: a result row was stored twice");
  adopting_clear(slot);  // given once: the tuplestore owns it now
  return tuple;
}

const TupleTableSlotOps kAdoptingSlotOps = {
    sizeof(AdoptingSlot),
    adopting_init,
    adopting_release,
    adopting_clear,
    adopting_getsomeattrs,
    adopting_getsysattr,
    adopting_materialize,
    adopting_copyslot,
    nullptr,
    nullptr,
    adopting_copy_heap_tuple,
    adopting_copy_minimal_tuple,
};

// A (bigint, float8[]) minimal tuple's bytes before its costs (the same for every width).
std::size_t cost_array_minimal_prefix() {
  return cost_array_layout(TYPALIGN_DOUBLE, TYPALIGN_DOUBLE).costs_offset() - MINIMAL_TUPLE_OFFSET;
}

}  // namespace

bool alloc_cost_array_rows(ResultStore* result, int count, std::size_t width,
                           double** rows) noexcept {
#if PG_VERSION_NUM < 160000
  static_assert(MINIMAL_TUPLE_OFFSET % 8 == 0, "a minimal tuple's costs must stay 8-byte aligned");
  if (result->arena == nullptr || !is_cost_array_desc(result->desc)) return false;
  const std::size_t prefix = cost_array_minimal_prefix();
  const Size length = prefix + width * sizeof(double);
  // The heap tuple it stands for within PostgreSQL's 1 GB (put_batch refuses it otherwise).
  if (width > (MaxAllocSize / sizeof(double)) ||
      !AllocSizeIsValid(HEAPTUPLESIZE + MINIMAL_TUPLE_OFFSET + length))
    return false;
  // No ERROR on the way: only system calls.
  char** tuples = reinterpret_cast<char**>(rows);  // the same slots, rewritten below
  if (!arena_writer_batch(result->arena, count, length, tuples)) return false;
  for (int i = 0; i < count; ++i) rows[i] = reinterpret_cast<double*>(tuples[i] + prefix);
  return true;
#else
  (void)result;
  (void)count;
  (void)width;
  (void)rows;
  return false;  // the arena (and its wait for a writer) is PostgreSQL 15's
#endif
}

void put_cost_array_row(ResultStore* result, double* costs, std::size_t width, int64 start_vid) {
  if (result->adopting_slot == nullptr) {
    MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(result));
    result->adopting_slot = MakeSingleTupleTableSlot(result->desc, &kAdoptingSlotOps);
    MemoryContextSwitchTo(old);
  }
  // The row's header as heap_form_tuple lays out a (bigint, float8[]) row without NULLs, formed
  // here and moved to where a minimal tuple keeps it (MINIMAL_TUPLE_OFFSET bytes in).
  const CostArrayLayout layout = cost_array_layout(TYPALIGN_DOUBLE, TYPALIGN_DOUBLE);
  const std::size_t costs_offset = layout.costs_offset();
  union {
    HeapTupleHeaderData header;
    char bytes[128];
  } formed;
  static_assert(sizeof formed >= 64, "room for the header");
  if (costs_offset > sizeof formed.bytes) elog(ERROR, "gpu_routing: a cost array header too long");
  memset(formed.bytes, 0, costs_offset);
  write_cost_array_header(&formed.header, layout, width);
  memcpy(formed.bytes + layout.hoff + layout.id_offset, &start_vid, sizeof start_vid);
  char* tuple = reinterpret_cast<char*>(costs) - (costs_offset - MINIMAL_TUPLE_OFFSET);
#if PG_VERSION_NUM < 160000
  arena_store_writer_chunk(result->arena, tuple);
#endif
  memcpy(tuple, formed.bytes + MINIMAL_TUPLE_OFFSET, costs_offset - MINIMAL_TUPLE_OFFSET);
  MinimalTuple minimal = reinterpret_cast<MinimalTuple>(tuple);
  minimal->t_len =
      static_cast<uint32>(costs_offset - MINIMAL_TUPLE_OFFSET + width * sizeof(double));
  TupleTableSlot* slot = result->adopting_slot;
  reinterpret_cast<AdoptingSlot*>(slot)->tuple = minimal;
  slot->tts_flags &= ~TTS_FLAG_EMPTY;
  tuplestore_puttupleslot(result->store, slot);
}

bool set_row_writer(ResultStore* result, void (*wait)(void*), void* arg) {
#if PG_VERSION_NUM < 160000
  if (g_row_writer.arena != nullptr || result->arena == nullptr) return false;
  g_row_writer.arena = result->arena;
  g_row_writer.wait = wait;
  g_row_writer.arg = arg;
  return true;
#else
  (void)result;
  (void)wait;
  (void)arg;
  return false;
#endif
}

void forget_row_writer(void* arg) {
#if PG_VERSION_NUM < 160000
  if (g_row_writer.arg == arg) g_row_writer = RowWriter();
#else
  (void)arg;
#endif
}

std::size_t cost_array_row_prefix() {
  // bigint and float8[] are both double-aligned.
  return cost_array_layout(TYPALIGN_DOUBLE, TYPALIGN_DOUBLE).costs_offset();
}

ResultStore* begin_result_store(FunctionCallInfo fcinfo, std::size_t rows_in_memory_bytes) {
  check_result_context(fcinfo);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  MemoryContext arena = row_arena(fcinfo);
  MemoryContext old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
  ResultStore* result = make_result_store(rsinfo->expectedDesc, arena,
                                          (rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
                                          rows_in_memory_bytes);
  MemoryContextSwitchTo(old);
  rsinfo->returnMode = SFRM_Materialize;
  rsinfo->setResult = result->store;
  rsinfo->setDesc = result->desc;
  return result;
}

}  // namespace gpu_routing::pg
