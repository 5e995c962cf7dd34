/*
 * rec_attach.c — recording a process that is already running: allocrec -p
 * PID has gdb load this shim with dlopen (the shim stays dormant,
 * rec_lifecycle.c) and call allocrr_attach(settings); allocrec --detach
 * PID, the end of --duration, or a gdb call of allocrr_detach() stop it.
 *
 * An attach points the heap functions' GOT entries of every loaded object
 * at the shim's hooks (rec_got.c) and opens a window trace
 * (rec_window_begin, AR_WINDOW_ATTACH); dlopen's entries point at
 * attach_dlopen, so objects loaded during the window are rebound too. The
 * entries are
 * changed only while no window is open (the hooks pass through): patched
 * before the window opens, put back after it closed (AR_STOP_DETACH). A
 * window thus sees every heap call or none, never the mallocs of some
 * objects without the frees of others.
 *
 * Invariants:
 *   - The hooks forward to the functions the process really used: rec_real
 *     is each function's definition in the loader's global order (what
 *     dlsym(RTLD_DEFAULT) finds, or the definition behind an executable's
 *     PLT stub, see definition()), never RTLD_NEXT (from a dlopen'ed object
 *     that finds libc's malloc even in a program linked against jemalloc),
 *     and rec_got.c changes only entries bound to exactly those.
 *   - The shim is never unloaded: a thread may still be inside a hook, or
 *     hold a hook's address taken while attached (&malloc read from a
 *     patched GLOB_DAT entry); a hook outside a window passes through.
 *     A second attach reuses the loaded shim and opens a new window.
 *   - allocrr_attach runs on a program thread that gdb stopped: it marks
 *     itself REC_SHIM_INTERNAL, so its own heap calls are never recorded,
 *     and leaves that thread's errno and state as it found them.
 *   - No signal handlers are installed: the program's are left alone.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rec_attach.h"
#include "rec_got.h"
#include "rec_internal.h"

#define AR_EXPORT __attribute__((visibility("default")))

static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static int attached;      /* a window of ours is open and the GOT points at the hooks */
static int started;       /* rec_init_attached ran (once per process) */
static unsigned attach_gen; /* bumped by every attach: a timer of an older one does nothing */
static char done_path[1024]; /* ALLOCRR_ATTACH_DONE: created when the window ends */

/* ---- the symbols rebound --------------------------------------------------------------- */
static void *(*shim_dlopen)(const char *, int);
static void *attach_dlopen(const char *file, int flags);

static rec_got_sym_t syms[] = {
	{"malloc", NULL, NULL},        {"free", NULL, NULL},          {"calloc", NULL, NULL},
	{"realloc", NULL, NULL},       {"reallocarray", NULL, NULL},  {"posix_memalign", NULL, NULL},
	{"aligned_alloc", NULL, NULL}, {"memalign", NULL, NULL},      {"valloc", NULL, NULL},
	{"pvalloc", NULL, NULL},       {"dlopen", NULL, NULL},
};
#define NSYMS (sizeof syms / sizeof syms[0])
/* Where each heap symbol's real function lives in rec_real (syms order). */
static const size_t real_offset[] = {
	offsetof(rec_real_t, malloc),        offsetof(rec_real_t, free),     offsetof(rec_real_t, calloc),
	offsetof(rec_real_t, realloc),       offsetof(rec_real_t, reallocarray),
	offsetof(rec_real_t, posix_memalign), offsetof(rec_real_t, aligned_alloc),
	offsetof(rec_real_t, memalign),      offsetof(rec_real_t, valloc),   offsetof(rec_real_t, pvalloc),
};
_Static_assert(sizeof real_offset / sizeof real_offset[0] == NSYMS - 1, "one offset per heap symbol");

/* ---- where each function really is ------------------------------------------------------ */
/* dlsym(RTLD_DEFAULT) answers with a non-PIE executable's PLT stub when
 * the executable takes the function's address (Debian's python3: &free is
 * then that stub everywhere, and the stub jumps through the executable's
 * own GOT entry). A hook forwarding to the stub would, once that entry
 * points at the hook, call itself. The definition is the first object
 * after the executable, in the loader's order, that defines the name. */
#define MAX_OBJECTS 512
typedef struct objects {
	size_t n;
	const char *name[MAX_OBJECTS];
	uintptr_t lo[MAX_OBJECTS], hi[MAX_OBJECTS];
} objects_t;

static int note_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	objects_t *o = arg;
	if (o->n >= MAX_OBJECTS)
		return 1;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			uintptr_t a = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			lo = a < lo ? a : lo;
			hi = a + info->dlpi_phdr[i].p_memsz > hi ? a + info->dlpi_phdr[i].p_memsz : hi;
		}
	o->name[o->n] = info->dlpi_name;
	o->lo[o->n] = lo;
	o->hi[o->n++] = hi;
	return 0;
}

static void *definition(const char *name)
{
	void *a = dlsym(RTLD_DEFAULT, name);
	static objects_t o; /* 12 KiB: not on a stopped thread's stack */
	o.n = 0;
	dl_iterate_phdr(note_object, &o);
	if (!a || !o.n || (uintptr_t)a < o.lo[0] || (uintptr_t)a >= o.hi[0])
		return a; /* not the executable's: a definition */
	for (size_t i = 1; i < o.n; i++) {
		if (!o.name[i] || !o.name[i][0])
			continue; /* the vDSO */
		void *h = dlopen(o.name[i], RTLD_LAZY | RTLD_NOLOAD);
		void *d = h ? dlsym(h, name) : NULL;
		if (h)
			dlclose(h); /* NOLOAD took a reference: give it back */
		if (d && (uintptr_t)d >= o.lo[i] && (uintptr_t)d < o.hi[i])
			return d; /* defined by that object itself, not a dependency */
	}
	return a;
}

/* Fill syms: each hook is this shim's own definition (dlsym on our own
 * handle: a plain reference would bind to libc's, the shim being loaded
 * RTLD_LOCAL), each real what the process resolves. A function the
 * process does not have at all (an allocator without pvalloc, an old libc
 * without reallocarray) is left unbound (real NULL: rec_got.c skips it).
 * 0, or -1 when malloc, free, calloc, realloc or dlopen are missing, or a
 * real function is the hook itself. */
static int find_symbols(void)
{
	Dl_info self;
	if (!dladdr((void *)find_symbols, &self) || !self.dli_fname)
		return -1;
	void *h = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD); /* never closed */
	if (!h)
		return -1;
	for (size_t i = 0; i < NSYMS; i++) {
		syms[i].hook = dlsym(h, syms[i].name);
		syms[i].real = definition(syms[i].name);
		int required = i < 4 || i == NSYMS - 1;
		if (!syms[i].hook || syms[i].hook == syms[i].real || (required && !syms[i].real))
			return -1;
	}
	*(void **)&shim_dlopen = syms[NSYMS - 1].hook;
	syms[NSYMS - 1].hook = (void *)attach_dlopen;
	rec_got_setup(syms, NSYMS, (const void *)find_symbols);
	return 0;
}

/* The program's dlopen while attached: the shim's dlopen (the loader-lock
 * bookkeeping and the module records for stacks), then the new objects'
 * entries rebound. Their constructors ran unrecorded: their blocks are
 * pre-existing ones to the window, like everything allocated before it. */
static void *attach_dlopen(const char *file, int flags)
{
	void *h = shim_dlopen(file, flags);
	int saved = errno;
	if (h && __atomic_load_n(&attached, __ATOMIC_ACQUIRE)) {
		int in = rec_tls.in_shim;
		rec_tls.in_shim = REC_SHIM_INTERNAL;
		rec_got_stats_t st = {0};
		pthread_mutex_lock(&attach_lock);
		if (attached)
			rec_got_patch(&st);
		pthread_mutex_unlock(&attach_lock);
		rec_tls.in_shim = in;
	}
	errno = saved;
	return h;
}

/* ---- settings of our own ---------------------------------------------------------------- */
/* The value of NAME= in settings (lines "NAME=value"), copied into out;
 * 0 when found. */
static int setting(const char *settings, const char *name, char *out, size_t cap)
{
	size_t len = strlen(name);
	for (const char *p = settings; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t linelen = nl ? (size_t)(nl - p) : strlen(p);
		if (linelen > len && strncmp(p, name, len) == 0 && p[len] == '=') {
			size_t n = linelen - len - 1;
			if (n >= cap)
				return -1;
			memcpy(out, p + len + 1, n);
			out[n] = 0;
			return 0;
		}
		p = nl ? nl + 1 : p + linelen;
	}
	return -1;
}

/* Tell the waiting allocrec -p that the window ended, and why. */
static void write_done(const char *why)
{
	if (!done_path[0])
		return;
	int fd = rec_open_high(done_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		ssize_t w = write(fd, why, strlen(why));
		(void)w;
		close(fd);
	}
	done_path[0] = 0;
}

/* ---- detach ------------------------------------------------------------------------------ */
/* Close the window, then put the GOT back, when the attach of generation
 * gen (0: whichever) is still on. Returns 0, or -1 when not attached. */
static int detach_now(const char *why, unsigned gen)
{
	int in = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	pthread_mutex_lock(&attach_lock);
	int rc = -1;
	if (attached && (!gen || gen == attach_gen)) {
		/* The window first: its end makes every hook pass through at
		 * once. Entries put back one by one while it recorded would
		 * let a free reach libc unseen while the next malloc, still
		 * hooked, is recorded returning the same address. */
		rec_window_end(AR_STOP_DETACH);
		__atomic_store_n(&attached, 0, __ATOMIC_RELEASE);
		rec_got_stats_t st = {0};
		rec_got_restore(&st);
		unsigned left = rec_got_count_hooked();
		char msg[128];
		snprintf(msg, sizeof msg, "%s restored=%u failed=%u hooked=%u\n", why, st.patched, st.failed, left);
		write_done(msg);
		rc = 0;
	}
	pthread_mutex_unlock(&attach_lock);
	rec_tls.in_shim = in;
	return rc;
}

static int control_detach(void)
{
	return detach_now("detach", 0);
}

/* --duration: a thread of ours that ends the window when the time is up,
 * unless a detach came first (or a newer attach replaced the window). */
typedef struct timer_arg {
	unsigned gen;
	uint64_t deadline_ns;
} timer_arg_t;
static timer_arg_t timer_args[2];

static void *duration_timer(void *arg)
{
	const timer_arg_t *a = arg;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	unsigned gen = a->gen;
	uint64_t deadline = a->deadline_ns;
	for (;;) {
		uint64_t now = rec_mono_ns();
		if (__atomic_load_n(&attach_gen, __ATOMIC_ACQUIRE) != gen || !__atomic_load_n(&attached, __ATOMIC_ACQUIRE))
			return NULL;
		if (now >= deadline)
			break;
		uint64_t left = deadline - now, step = left < 50000000u ? left : 50000000u; /* 50 ms */
		struct timespec ts = {(time_t)(step / 1000000000u), (long)(step % 1000000000u)};
		nanosleep(&ts, NULL);
	}
	detach_now("duration", gen);
	return NULL;
}

static int start_timer(uint64_t duration_ns)
{
	timer_arg_t *a = &timer_args[attach_gen & 1];
	a->gen = attach_gen;
	a->deadline_ns = rec_mono_ns() + duration_ns;
	return rec_thread_start_detached(duration_timer, a, 0) == 0 ? 0 : -1;
}

/* ---- attach ------------------------------------------------------------------------------ */
/* Once per process: the real functions, the recorder's start-up, the
 * control channel with our detach. */
static int first_start(const char *settings)
{
	if (started)
		return rec_config_parse(settings) == 0 ? AR_ATTACH_OK : AR_ATTACH_INIT;
	if (find_symbols() != 0)
		return AR_ATTACH_NO_REAL;
	if (rec_config_parse(settings) != 0 || rec_init_attached() != 0)
		return AR_ATTACH_INIT;
	/* The hooks forward to the definitions, whatever rec_real held: an
	 * executable's PLT stub from RTLD_DEFAULT, or libc's functions from
	 * RTLD_NEXT if a hook ran while dormant (a debugger calling the
	 * shim's malloc). malloc_usable_size too: a window measures the
	 * blocks it frees with it, and jemalloc's blocks are not libc's. */
	rec_real.malloc_usable_size = (size_t(*)(void *))definition("malloc_usable_size");
	for (size_t i = NSYMS - 1; i-- > 0;) /* malloc, which callers test, last */
		if (syms[i].real)
			*(void **)((char *)&rec_real + real_offset[i]) = syms[i].real;
	rec_control_detach_fn = control_detach;
	rec_control_start(); /* allocrec --detach PID; without it, a gdb call of allocrr_detach */
	started = 1;
	return AR_ATTACH_OK;
}

static int attach_locked(const char *settings)
{
	if (!rec_dormant)
		return AR_ATTACH_PRELOADED;
	if (attached)
		return AR_ATTACH_BUSY;
	int rc = first_start(settings);
	if (rc != AR_ATTACH_OK)
		return rc;
	char num[32];
	uint64_t duration_ns = 0;
	if (setting(settings, "ALLOCRR_ATTACH_DURATION_NS", num, sizeof num) == 0)
		duration_ns = strtoull(num, NULL, 10);
	rec_cfg.duration_ns = 0; /* ours to end (AR_STOP_DETACH), GOT included */
	if (setting(settings, "ALLOCRR_ATTACH_DONE", done_path, sizeof done_path) != 0)
		done_path[0] = 0;
	/* The GOT first, while the hooks still pass through (paused); then
	 * the window, which turns them all on at once (see detach_now). */
	rec_got_stats_t st = {0};
	rec_got_patch(&st);
	if (!st.patched) {
		rec_got_restore(&st);
		return AR_ATTACH_NO_GOT;
	}
	if (rec_cfg.output[0])
		rec_window_new_output(); /* -o names this attach's trace, whatever came before */
	if (rec_window_begin(AR_WINDOW_ATTACH) != 0) {
		rec_got_restore(&st);
		return AR_ATTACH_WINDOW;
	}
	attach_gen++;
	__atomic_store_n(&attached, 1, __ATOMIC_RELEASE);
	if (duration_ns && start_timer(duration_ns) != 0)
		rec_warn("cannot start the --duration timer: stop with allocrec --detach %d", (int)rec_getpid());
	return AR_ATTACH_OK;
}

/* Start recording this process (see the file comment). settings: lines
 * "NAME=value" as rec_config_parse reads them, plus ALLOCRR_ATTACH_DONE (a
 * file created when the window ends, holding why) and
 * ALLOCRR_ATTACH_DURATION_NS (end the window after that long). Returns 0,
 * or one of the negative ATTACH_* codes. */
AR_EXPORT int allocrr_attach(const char *settings)
{
	int saved_errno = errno;
	int in = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	pthread_mutex_lock(&attach_lock);
	int rc = attach_locked(settings);
	pthread_mutex_unlock(&attach_lock);
	rec_tls.in_shim = in;
	errno = saved_errno;
	return rc;
}

AR_EXPORT int allocrr_detach(void)
{
	int saved_errno = errno;
	int rc = detach_now("detach", 0);
	errno = saved_errno;
	return rc;
}

AR_EXPORT int allocrr_attach_hooked(void)
{
	int saved_errno = errno;
	int in = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	int n = started ? (int)rec_got_count_hooked() : 0;
	rec_tls.in_shim = in;
	errno = saved_errno;
	return n;
}
