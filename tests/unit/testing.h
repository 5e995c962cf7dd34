/*
 * testing.h — the few macros our unit tests share. A failed expectation prints
 * file:line and the values, counts, and lets the test go on; TEST_END() makes
 * the exit status say whether anything failed.
 */
#ifndef AR_TESTING_H
#define AR_TESTING_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int test_failures;

#define EXPECT(cond)                                                                  \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
			test_failures++;                                              \
		}                                                                     \
	} while (0)

#define EXPECT_U64(a, b)                                                                       \
	do {                                                                                   \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                               \
		if (a_ != b_) {                                                                \
			fprintf(stderr, "%s:%d: %s == %" PRIu64 ", expected %s == %" PRIu64 "\n", \
				__FILE__, __LINE__, #a, a_, #b, b_);                           \
			test_failures++;                                                       \
		}                                                                              \
	} while (0)

#define EXPECT_STR(a, b)                                                                          \
	do {                                                                                      \
		const char *a_ = (a), *b_ = (b);                                                  \
		if (strcmp(a_, b_) != 0) {                                                        \
			fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, \
				#a, a_, b_);                                                      \
			test_failures++;                                                          \
		}                                                                                 \
	} while (0)

/* Run one test function and say its name when it failed. */
#define RUN(fn)                                                                   \
	do {                                                                      \
		int before_ = test_failures;                                      \
		fn();                                                             \
		if (test_failures != before_)                                     \
			fprintf(stderr, "  in %s\n", #fn);                        \
	} while (0)

#define TEST_END() (test_failures ? (fprintf(stderr, "%d expectation(s) failed\n", test_failures), 1) : 0)

#endif
