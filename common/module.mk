# common/: what every allocrr command shares (ar_cli.h: --version, error and
# usage-error wording, "-" for standard output), built as a static library
# the four tools link. Nothing here is loaded into a recorded program.
COMMON_SRCS := $(wildcard common/*.c)
COMMON_OBJS := $(call objs,$(COMMON_SRCS))
$(COMMON_OBJS): CFLAGS_OUR += -DALLOCRR_VERSION='"$(ALLOCRR_VERSION)"'

$(COMMON_LIB): $(COMMON_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(COMMON_LIB)
DEP_FILES += $(COMMON_OBJS:.o=.d)
