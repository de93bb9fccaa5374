/* A minimal unit-test harness: CHECK* macros count failures and report the
 * line; check_exit() returns the process status and prints a summary line
 * the test runner can read. */
#ifndef NTLENS_TEST_CHECK_H
#define NTLENS_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        check_count++;                                                                    \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);      \
            check_failures++;                                                             \
        }                                                                                 \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                \
    do {                                                                                  \
        uint64_t check_a_ = (uint64_t)(a), check_b_ = (uint64_t)(b);                      \
        check_count++;                                                                    \
        if (check_a_ != check_b_) {                                                       \
            fprintf(stderr, "%s:%d: %s == %s failed: 0x%" PRIx64 " != 0x%" PRIx64 "\n",   \
                    __FILE__, __LINE__, #a, #b, check_a_, check_b_);                      \
            check_failures++;                                                             \
        }                                                                                 \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                \
    do {                                                                                  \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                   \
        check_count++;                                                                    \
        if (check_a_ != check_b_) {                                                       \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, \
                    #a, #b, check_a_, check_b_);                                          \
            check_failures++;                                                             \
        }                                                                                 \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                \
    do {                                                                                  \
        const char *check_a_ = (a), *check_b_ = (b);                                      \
        check_count++;                                                                    \
        if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_)) {                       \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__,       \
                    __LINE__, #a, #b, check_a_ ? check_a_ : "(null)",                     \
                    check_b_ ? check_b_ : "(null)");                                      \
            check_failures++;                                                             \
        }                                                                                 \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                             \
    do {                                                                                  \
        double check_a_ = (a), check_b_ = (b);                                            \
        check_count++;                                                                    \
        if (!(check_a_ - check_b_ <= (tol) && check_b_ - check_a_ <= (tol))) {            \
            fprintf(stderr, "%s:%d: %s ~ %s failed: %.17g != %.17g\n", __FILE__,          \
                    __LINE__, #a, #b, check_a_, check_b_);                                \
            check_failures++;                                                             \
        }                                                                                 \
    } while (0)

/* Path of a file in ../shared/data (NTLENS_SHARED_DATA), in a static buffer. */
static inline const char *check_data_path(const char *rel)
{
    static char buf[4096];
    const char *root = getenv("NTLENS_SHARED_DATA");
    snprintf(buf, sizeof buf, "%s/%s", root ? root : "../shared/data", rel);
    return buf;
}

/* tmpfile(), retried: msvcrt's sometimes returns NULL under Wine when the
 * tests run side by side in one prefix (seen in cli-parse-options, which
 * then crashed in fileno). The test stops with a message, never on NULL. */
static inline FILE *check_tmpfile(void)
{
    for (int try = 0; try < 100; try++) {
        FILE *f = tmpfile();
        if (f)
            return f;
    }
    fprintf(stderr, "cannot create a temporary file\n");
    exit(1);
}

static inline int check_exit(void)
{
    printf("%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
