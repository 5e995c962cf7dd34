/*
 * rec_signal.c — flush the trace (best effort) when the program is about to
 * die of a signal, without changing what the signal does to the program.
 *
 * For the fatal signals below we keep, per signal, the disposition the
 * *program* asked for (through sigaction/signal, which we interpose) and
 * answer its queries with it. Underneath, our handler is installed whenever
 * the program wants the default action or a handler of its own:
 *   - program handler: we call it exactly as the kernel would have (same
 *     flags, mask and arguments); no flush, the program decides its fate;
 *   - default action: we close the trace (bounded wait for the writer), put
 *     SIG_DFL back and re-raise, so the process dies of the same signal
 *     (exit status, core dump) as it would have unrecorded;
 *   - either way, a signal that interrupts this thread while it writes into
 *     its buffer waits for the write to end (rec_appending_end,
 *     rec_signal_deferred);
 *   - ignore: the real SIG_IGN is installed, so nothing changes at all
 *     (also across exec, where an ignored signal stays ignored).
 *
 * The signals are all those whose default action ends the process
 * (fatal_sigs and the real-time ones), so a program killed by SIGPIPE in a
 * pipeline, by SIGUSR1 or SIGALRM it never handles, leaves a complete trace.
 * The stop signals and those ignored by default are left alone. A program
 * can still see one difference: /proc/self/status lists these signals as
 * caught (SigCgt) rather than default.
 *
 * Invariants: errno is preserved across our handler; a synchronous fault
 * (SIGSEGV/SIGBUS/SIGFPE/SIGILL from the kernel) is re-raised by returning to
 * the faulting instruction with SIG_DFL installed; everything else
 * (SIGTRAP from int3 and SIGSYS from seccomp included, which would not
 * fault again) is re-raised with raise().
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <dlfcn.h>

#include "rec_internal.h"

#define AR_EXPORT __attribute__((visibility("default")))

/* Every signal whose default action ends the process (terminate or core):
 * SIGPIPE matters most (a pipeline's reader goes away: `PROG | head`), the
 * real-time signals are added at start-up. */
static const int fatal_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
				 SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ,
				 SIGSYS, SIGTRAP, SIGSTKFLT, SIGPWR, SIGIO};
static struct sigaction prog_act[NSIG]; /* what the program believes is installed */
static unsigned char managed[NSIG];
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

static void resolve(void)
{
	if (!real_sigaction)
		real_sigaction = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
}

static int install(int sig, const struct sigaction *sa);

static int is_fault(int sig, const siginfo_t *si)
{
	return (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) && si && si->si_code > 0;
}

/* Close the trace, put SIG_DFL back and re-raise: the process dies of sig
 * as it would have unrecorded. */
static void die_of(int sig, const siginfo_t *si)
{
	int saved_shim = rec_tls.in_shim;
	rec_tls.in_shim = REC_SHIM_INTERNAL;
	rec_writer_finish("signal", 2000);
	rec_tls.in_shim = saved_shim;
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	real_sigaction(sig, &dfl, NULL);
	if (!is_fault(sig, si))
		raise(sig); /* in the handler: pending until it returns, the signal is blocked there */
}

/* What the kernel's delivery of sig means, the program's view: its handler
 * called as the kernel would have, nothing for an ignored signal, or the
 * default action, dying with the trace closed. */
static void deliver(int sig, siginfo_t *si, void *uc, int saved_errno)
{
	struct sigaction *pa = &prog_act[sig];
	if (pa->sa_handler != SIG_DFL && pa->sa_handler != SIG_IGN) {
		struct sigaction call = *pa;
		if (pa->sa_flags & SA_RESETHAND) { /* done here, not by the kernel: see install() */
			memset(pa, 0, sizeof *pa);
			pa->sa_handler = SIG_DFL;
			sigemptyset(&pa->sa_mask);
			install(sig, pa);
		}
		errno = saved_errno;
		if (call.sa_flags & SA_SIGINFO)
			call.sa_sigaction(sig, si, uc);
		else
			call.sa_handler(sig);
		return;
	}
	if (pa->sa_handler == SIG_DFL)
		die_of(sig, si); /* the default action: the process dies now, its trace closed */
	/* SIG_IGN: raced with a change, behave as ignored */
}

static void handler(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	/* Not in the middle of an append (a fresh buffer's page fault is
	 * where a signal meets a thread most): a program handler that calls
	 * exit(), or our own close, would find that buffer half-written and
	 * lose it, leaving the trace without a footer. The append ends
	 * within instructions (its waits run with appending clear), and
	 * rec_signal_deferred delivers the signal there. */
	rec_thread_t *t = rec_tls.t;
	if (t && t->appending && !is_fault(sig, si) && prog_act[sig].sa_handler != SIG_IGN) {
		if (!t->deferred_sigs && si)
			t->deferred_si = *si;
		t->deferred_sigs |= 1ull << (sig - 1);
		errno = saved_errno;
		return;
	}
	deliver(sig, si, uc, saved_errno);
	errno = saved_errno;
}

/* The signals deferred while t was appending, delivered now that it is not,
 * under the mask the kernel would have set for the handler. The first keeps
 * its siginfo (a handler may log the sender); another within the same few
 * instructions reads as sent by this thread. The context passed is this
 * one (the interrupted point lies a few instructions back). */
void rec_signal_deferred(rec_thread_t *t)
{
	int saved_errno = errno;
	while (t->deferred_sigs) {
		int sig = __builtin_ctzll(t->deferred_sigs) + 1;
		t->deferred_sigs &= ~(1ull << (sig - 1));
		siginfo_t si;
		if (t->deferred_si.si_signo == sig) {
			si = t->deferred_si;
			t->deferred_si.si_signo = 0;
		} else {
			memset(&si, 0, sizeof si);
			si.si_signo = sig;
			si.si_code = SI_TKILL;
			si.si_pid = rec_getpid();
			si.si_uid = getuid();
		}
		const struct sigaction *pa = &prog_act[sig];
		sigset_t mask = pa->sa_mask, old;
		if (!(pa->sa_flags & SA_NODEFER))
			sigaddset(&mask, sig);
		pthread_sigmask(SIG_BLOCK, &mask, &old);
		ucontext_t uc;
		getcontext(&uc);
		deliver(sig, &si, &uc, saved_errno);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	errno = saved_errno;
}

/* The signals a closing thread holds off: every fatal one but the
 * synchronous faults, which a blocked mask cannot stop (the kernel kills
 * the process instead) and which only a bug in the close itself could
 * raise there. Whether we manage a signal does not matter: a program
 * handler that calls exit() mid-close would wait for the close too. */
static void hold_set(sigset_t *s)
{
	sigemptyset(s);
	size_t nfixed = sizeof fatal_sigs / sizeof fatal_sigs[0];
	for (size_t i = 0; i < nfixed; i++)
		sigaddset(s, fatal_sigs[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(s, sig);
	int sync_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
	for (size_t i = 0; i < sizeof sync_sigs / sizeof sync_sigs[0]; i++)
		sigdelset(s, sync_sigs[i]);
}

void rec_signals_hold(sigset_t *old)
{
	sigset_t s;
	hold_set(&s);
	pthread_sigmask(SIG_BLOCK, &s, old);
}

void rec_signals_release(const sigset_t *old)
{
	int saved_errno = errno;
	pthread_sigmask(SIG_SETMASK, old, NULL);
	errno = saved_errno;
}

/* Install our handler under the program's flags and mask (sa describes what
 * the program wants; SIG_IGN is installed for real). SA_RESETHAND is kept
 * from the kernel and done by the handler: the kernel would reset to the
 * real SIG_DFL, and the program's handler that then re-raises its signal
 * (node's SIGTERM handler does: restore the terminal, raise) would kill the
 * process without the trace being closed. */
static int install(int sig, const struct sigaction *sa)
{
	struct sigaction k = *sa;
	if (sa->sa_handler == SIG_IGN)
		return real_sigaction(sig, &k, NULL);
	k.sa_sigaction = handler;
	k.sa_flags = (sa->sa_handler == SIG_DFL ? 0 : sa->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
	if (sa->sa_handler == SIG_DFL)
		sigemptyset(&k.sa_mask);
	return real_sigaction(sig, &k, NULL);
}

void rec_signals_init(void)
{
	resolve();
	if (!real_sigaction)
		return;
	size_t nfixed = sizeof fatal_sigs / sizeof fatal_sigs[0];
	for (size_t i = 0; i < nfixed + (size_t)(SIGRTMAX - SIGRTMIN + 1); i++) {
		int sig = i < nfixed ? fatal_sigs[i] : SIGRTMIN + (int)(i - nfixed);
		struct sigaction cur;
		if (real_sigaction(sig, NULL, &cur) != 0)
			continue;
		if (cur.sa_handler == SIG_IGN) {
			prog_act[sig] = cur;
			managed[sig] = 1;
			continue;
		}
		if (cur.sa_handler != SIG_DFL)
			continue; /* someone installed a handler before us: leave it alone */
		prog_act[sig] = cur;
		managed[sig] = 1;
		install(sig, &cur);
	}
}

AR_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	resolve();
	if (sig <= 0 || sig >= NSIG || !managed[sig])
		return real_sigaction(sig, act, old);
	struct sigaction prev = prog_act[sig];
	if (act) {
		int rc = install(sig, act);
		if (rc != 0)
			return rc;
		prog_act[sig] = *act;
	}
	if (old)
		*old = prev;
	return 0;
}

AR_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	/* glibc's signal() has BSD semantics: SA_RESTART, handler stays installed. */
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	sa.sa_flags = SA_RESTART;
	if (sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	if (sigaction(sig, &sa, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}
