# gpu_routing, built the PostgreSQL way (PGXS): make, make install, make installcheck.
#
# The C++/CUDA core (src/core, kernels) is built by CMake as a static library and linked into
# the extension; CUDA is used when nvcc is found (WITH_CUDA=0 builds the CPU engines only).

EXTENSION = gpu_routing
MODULE_big = gpu_routing
DATA = sql/gpu_routing--0.1.0.sql sql/gpu_routing--0.1.0--0.2.0.sql sql/gpu_routing--0.2.0.sql \
       sql/gpu_routing--0.2.0--0.3.0.sql sql/gpu_routing--0.3.0.sql \
       sql/gpu_routing--0.3.0--0.4.0.sql sql/gpu_routing--0.4.0.sql \
       sql/gpu_routing--0.4.0--0.5.0.sql sql/gpu_routing--0.5.0.sql
PGFILEDESC = "gpu_routing - shortest paths on the GPU"
OBJS = $(patsubst %.cpp,%.o,$(sort $(wildcard src/pg/*.cpp src/pg/kept/*.cpp)))

# pg_regress: test/regress/sql/<test>.sql against test/regress/expected/<test>.out (sql/ holds the
# extension's install and upgrade scripts only). The data lives in ../shared/data
# (GPU_ROUTING_DATA overrides); setup loads it into the test database. no_preload (not listed:
# test/deployments/run.sh runs it on a server without preload) lives there too.
REGRESS = setup sssp path apsp arrays compatibility pgrouting_docs limits rows inner_query errors settings info kept_graphs migrations progress service_areas gpu_pgr
REGRESS_DIR = test/regress
REGRESS_OPTS = --load-extension=plpgsql --inputdir=$(REGRESS_DIR) --outputdir=$(REGRESS_DIR)/output
# Concurrency (PostgreSQL's isolation tester): test/isolation/specs/<name>.spec against
# test/isolation/expected/<name>.out. Kept graphs need the library preloaded in the server.
ISOLATION = kept_graph_changes kept_graph_ddl progress road_index road_index_off
ISOLATION_OPTS = --inputdir=test/isolation --outputdir=test/isolation/output

PG_CONFIG ?= pg_config
CMAKE ?= cmake
WITH_CUDA ?= auto
CORE_BUILD ?= build/extension
# The extension needs only the core library; scripts/test.sh shares its build folder (with tests
# and benchmarks on) by clearing this.
CORE_CMAKE_OPTIONS ?= -DGPU_ROUTING_TESTS=OFF -DGPU_ROUTING_BENCH=OFF -DGPU_ROUTING_CLIENT=OFF
NPROC := $(shell nproc 2>/dev/null || echo 2)

ifeq ($(WITH_CUDA),0)
CMAKE_CUDA_OPTION = -DGPU_ROUTING_CUDA=OFF
else
CMAKE_CUDA_OPTION = -DGPU_ROUTING_CUDA=ON
endif

CORE_LIB = $(CORE_BUILD)/libgpu_routing_core.a
PG_CPPFLAGS = -Isrc/core -Isrc/pg
PG_CXXFLAGS = -std=c++17 -fopenmp -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers -Wno-register
# Read when the extension is linked, after CMake wrote it: the CUDA runtime when built with CUDA.
SHLIB_LINK = $(CORE_LIB) $(shell cat $(CORE_BUILD)/extension_link_flags.txt 2>/dev/null) -fopenmp -lstdc++ -lm

# No LLVM bitcode for JIT inlining: our functions are set-returning C++ calls, nothing to inline
# (and building it would need clang).
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

.PHONY: core
core:
	$(CMAKE) -S . -B $(CORE_BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_CUDA_OPTION) $(CORE_CMAKE_OPTIONS) >/dev/null
	$(CMAKE) --build $(CORE_BUILD) --target gpu_routing_core gpu_routing_service -j$(NPROC)

# The GPU service program (src/pg/service.cpp starts it): installed beside the extension's library.
SERVICE_PROGRAM = $(CORE_BUILD)/gpu_routing_service
install: install-service
.PHONY: install-service
install-service: $(CORE_LIB)
	$(MKDIR_P) '$(DESTDIR)$(pkglibdir)'
	$(INSTALL_PROGRAM) $(SERVICE_PROGRAM) '$(DESTDIR)$(pkglibdir)/gpu_routing_service'

$(CORE_LIB): core
$(OBJS): | core
# PGXS tracks no header dependencies: any core or pg header change rebuilds the entry points, whose
# layout of the core's classes must match the library's.
$(OBJS): $(wildcard src/core/*/*.hpp src/pg/*.hpp src/pg/kept/*.hpp)
$(shlib): $(CORE_LIB)

clean: clean-core
clean-core:
	rm -rf $(CORE_BUILD)

# The regression test names and their folder, for scripts that run pg_regress themselves
# (scripts/gpu/suite.sh, test/deployments/run.sh, test/package/run.sh).
print-regress:
	@echo $(REGRESS)
print-regress-dir:
	@echo $(REGRESS_DIR)
