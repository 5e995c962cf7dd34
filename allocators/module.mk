# allocators/: our four allocators as drop-in mallocs, build/lib/liballocrr-NAME.so
# (NAME = pool, arena, tlscache, freelist), their debug builds
# build/lib/liballocrr-NAME-debug.so (the same sources with -DAR_ALLOC_DEBUG,
# plus common/debug.c), and the allocator registry, build/lib/liballocrr-registry.a.
# Tests: tests/allocators/ (programs) and tests/e2e/alloc_*.sh,
# tests/e2e/torture_alloc_*.sh (which LD_PRELOAD them).

ALLOC_NAMES := pool arena tlscache freelist
# debug.c is the debug build's only extra source; the normal build never sees it.
ALLOC_DEBUG_SRC := allocators/common/debug.c
ALLOC_COMMON_SRCS := $(filter-out $(ALLOC_DEBUG_SRC),$(sort $(wildcard allocators/common/*.c)))
ALLOC_pool_SRCS := $(sort $(wildcard allocators/pool/*.c))
# tlscache's central heap is the pool's per-class heap.
ALLOC_tlscache_SRCS := $(sort $(wildcard allocators/tlscache/*.c)) allocators/pool/pool_heap.c
ALLOC_arena_SRCS := $(sort $(wildcard allocators/arena/*.c))
ALLOC_freelist_SRCS := $(sort $(wildcard allocators/freelist/*.c))

# A preloaded malloc cannot run under a sanitizer (the sanitizer's runtime
# is itself a malloc), so the .so objects drop -fsanitize even in SAN builds.
# Hidden visibility: only the malloc API and ar_allocator_stats leave the .so.
# -fno-builtin-*: the compiler must not turn our own code into calls to the
# functions we are defining (malloc + memset -> calloc would recurse).
ALLOC_NOSAN_CFLAGS := $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(CFLAGS_OUR)) \
	-Iallocators -Iallocators/common
ALLOC_SO_CFLAGS := $(ALLOC_NOSAN_CFLAGS) -Iallocators/pool -fvisibility=hidden \
	-ftls-model=initial-exec -fno-builtin-malloc -fno-builtin-calloc \
	-fno-builtin-realloc -fno-builtin-free
ALLOC_SO_LDFLAGS := $(filter-out -fsanitize=%,$(LDFLAGS_OUR)) -shared -pthread \
	-Wl,-z,now -Wl,-z,nodelete -Wl,--no-undefined

ALLOC_SO_SRCS := $(sort $(ALLOC_COMMON_SRCS) $(foreach n,$(ALLOC_NAMES),$(ALLOC_$(n)_SRCS)))
ALLOC_SO_OBJS := $(call objs,$(ALLOC_SO_SRCS))
$(ALLOC_SO_OBJS): CFLAGS_OUR := $(ALLOC_SO_CFLAGS)

ALLOC_SOS := $(patsubst %,$(BUILD)/lib/liballocrr-%.so,$(ALLOC_NAMES))

define ALLOC_SO_RULE
$(BUILD)/lib/liballocrr-$(1).so: $(call objs,$(ALLOC_COMMON_SRCS) $(ALLOC_$(1)_SRCS))
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo "  LD      $$@")
	$$(Q)$$(CC) $(ALLOC_SO_LDFLAGS) -o $$@ $$^
endef
$(foreach n,$(ALLOC_NAMES),$(eval $(call ALLOC_SO_RULE,$(n))))

# ---- prefixed builds (allocreplay --route) --------------------------------------
# The same allocator with api.c compiled again under -DAR_API_PREFIX=allocrr_NAME_:
# $(BUILD)/lib/liballocrr-NAME-prefixed.so exports allocrr_NAME_malloc, allocrr_NAME_free,
# ... and allocrr_NAME_allocator_stats, and no malloc, so the replay worker can
# dlopen it beside the preloaded base allocator and send chosen calls to it
# (replayer/worker_route.h). The cores' objects are the .so's own; only
# api.c is compiled once more per allocator.
ALLOC_API_SRC := allocators/common/api.c
pobjs = $(BUILD)/obj-prefixed/$(1)/api.o
ALLOC_PREFIXED_SOS := $(patsubst %,$(BUILD)/lib/liballocrr-%-prefixed.so,$(ALLOC_NAMES))

define ALLOC_PREFIXED_RULE
$(call pobjs,$(1)): $(ALLOC_API_SRC) | $(DEPS_STAMP)
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo "  CC      $$< (allocrr_$(1)_)")
	$$(Q)$$(CC) $(ALLOC_SO_CFLAGS) -DAR_API_PREFIX=allocrr_$(1)_ -MMD -MP -c $$< -o $$@
$(BUILD)/lib/liballocrr-$(1)-prefixed.so: $(call pobjs,$(1)) $(call objs,$(filter-out $(ALLOC_API_SRC),$(ALLOC_COMMON_SRCS)) $(ALLOC_$(1)_SRCS))
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo "  LD      $$@")
	$$(Q)$$(CC) $(ALLOC_SO_LDFLAGS) -o $$@ $$^
endef
$(foreach n,$(ALLOC_NAMES),$(eval $(call ALLOC_PREFIXED_RULE,$(n))))

# ---- debug builds ----------------------------------------------------------------
# Every allocator source compiled again with -DAR_ALLOC_DEBUG into
# $(BUILD)/obj-debug/, plus debug.c (allocators/common/debug.h). The registry
# does not list these: they are the same allocators with checks, for tests,
# not candidates to compare (tests/e2e/torture_alloc_debug.sh preloads them
# by path).
ALLOC_DEBUG_CFLAGS := $(ALLOC_SO_CFLAGS) -DAR_ALLOC_DEBUG
dobjs = $(patsubst %.c,$(BUILD)/obj-debug/%.o,$(1))
ALLOC_DEBUG_OBJS := $(call dobjs,$(ALLOC_SO_SRCS) $(ALLOC_DEBUG_SRC))
ALLOC_DEBUG_SOS := $(patsubst %,$(BUILD)/lib/liballocrr-%-debug.so,$(ALLOC_NAMES))

$(BUILD)/obj-debug/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $< (debug)")
	$(Q)$(CC) $(ALLOC_DEBUG_CFLAGS) -MMD -MP -c $< -o $@

define ALLOC_DEBUG_SO_RULE
$(BUILD)/lib/liballocrr-$(1)-debug.so: $(call dobjs,$(ALLOC_COMMON_SRCS) $(ALLOC_DEBUG_SRC) $(ALLOC_$(1)_SRCS))
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo "  LD      $$@")
	$$(Q)$$(CC) $(ALLOC_SO_LDFLAGS) -o $$@ $$^
endef
$(foreach n,$(ALLOC_NAMES),$(eval $(call ALLOC_DEBUG_SO_RULE,$(n))))

# ---- registry ----------------------------------------------------------------
ALLOC_REG_SRCS := allocators/registry.c allocators/registry_probe.c
ALLOC_REG_OBJS := $(call objs,$(ALLOC_REG_SRCS))
ALLOC_REG_DEFS := -Iallocators -DAR_ALLOC_LIBDIR='"$(PREFIX)/lib/allocrr"'
$(ALLOC_REG_OBJS): CFLAGS_OUR += $(ALLOC_REG_DEFS)

$(ALLOC_REG_LIB): $(ALLOC_REG_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# ---- tests ---------------------------------------------------------------------
# The registry's unit test is an ordinary UNIT_TEST (also run under ASan+UBSan).
ALLOC_REG_TEST := $(BUILD)/tests/test_alloc_registry
ALLOC_REG_TEST_OBJ := $(call objs,tests/allocators/test_alloc_registry.c)
$(ALLOC_REG_TEST_OBJ): CFLAGS_OUR += -Iallocators -Itests/unit
$(ALLOC_REG_TEST): $(ALLOC_REG_TEST_OBJ) $(ALLOC_REG_LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_OUR) -o $@ $^ -lpthread

# Programs run under LD_PRELOAD of every allocator (tests/e2e/alloc_*.sh):
# never sanitized, compiled straight from source (registry included) so a
# SAN build's registry archive never ends up inside them. -fno-builtin keeps
# the compiler from reasoning away the very calls the tests make; the two
# -Wno- flags silence warnings about exactly the edge cases under test
# (using a block after a realloc that must fail, absurd sizes).
ALLOC_PRELOAD_TESTS := alloc_api alloc_stress alloc_stats alloc_list debug_bugs alloc_contend alloc_reuse alloc_shards
ALLOC_PRELOAD_BINS := $(patsubst %,$(BUILD)/tests/%,$(ALLOC_PRELOAD_TESTS))
ALLOC_TEST_HDRS := allocators/ar_alloc.h tests/unit/testing.h tests/allocators/alloc_test.h
$(ALLOC_PRELOAD_BINS): $(BUILD)/tests/%: tests/allocators/%.c $(ALLOC_REG_SRCS) $(ALLOC_TEST_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC+LD   $@")
	$(Q)$(CC) $(ALLOC_NOSAN_CFLAGS) $(ALLOC_REG_DEFS) -Itests/unit -Itests/allocators -fno-builtin \
	  -Wno-use-after-free -Wno-alloc-size-larger-than \
	  -o $@ $< $(ALLOC_REG_SRCS) -lpthread

# Large blocks and the cache of freed mappings (tests/unit/test_large.c): the
# unit-test pattern of tests/module.mk, linked with those modules' objects.
ALLOC_LARGE_TEST := $(BUILD)/tests/test_large
ALLOC_LARGE_TEST_SRCS := allocators/common/large.c allocators/common/map_cache.c \
	allocators/common/os.c allocators/common/tunables.c
$(ALLOC_LARGE_TEST): $(call objs,$(ALLOC_LARGE_TEST_SRCS))
$(BUILD)/obj/tests/unit/test_large.o: CFLAGS_OUR += -Iallocators -Iallocators/common
# pool's lock-free free list (tests/unit/test_pool_list.c): the header alone.
$(BUILD)/obj/tests/unit/test_pool_list.o: CFLAGS_OUR += -Iallocators -Iallocators/common -Iallocators/pool
TSAN_TESTS += $(BUILD)/tests/test_pool_list $(BUILD)/tests/test_large

ALL_TARGETS += $(ALLOC_SOS) $(ALLOC_DEBUG_SOS) $(ALLOC_PREFIXED_SOS) $(ALLOC_REG_LIB) $(ALLOC_PRELOAD_BINS)
UNIT_TESTS += $(ALLOC_REG_TEST)
INSTALL_PLUGINS += $(ALLOC_SOS) $(ALLOC_DEBUG_SOS) $(ALLOC_PREFIXED_SOS)
DEP_FILES += $(ALLOC_SO_OBJS:.o=.d) $(foreach n,$(ALLOC_NAMES),$(BUILD)/obj-prefixed/$(n)/api.d) $(ALLOC_DEBUG_OBJS:.o=.d) $(ALLOC_REG_OBJS:.o=.d) $(ALLOC_REG_TEST_OBJ:.o=.d)

.PHONY: allocators
allocators: $(ALLOC_SOS) $(ALLOC_DEBUG_SOS) $(ALLOC_PREFIXED_SOS) $(ALLOC_REG_LIB) $(ALLOC_PRELOAD_BINS) $(ALLOC_REG_TEST)
