/*
 * libfake.so — a "wrong LD_PRELOAD" for tests/e2e/replay_failures.sh: a
 * shared library that loads fine but defines no malloc, so glibc keeps
 * serving the heap. A worker started with it must refuse to report (status
 * wrong_allocator) instead of measuring glibc under another name.
 */
int allocrr_fake_allocator(void);
int allocrr_fake_allocator(void)
{
	return 42;
}
