/* testutil: the CHECK macro every test uses — a failed condition is counted and reported
 * with file, line and a printf-style message, and the test goes on to report the rest. */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <stddef.h>
#include <stdio.h>

#include "linalg.h"

extern int tc_failures; /* tests/support/testutil.c */

#define CHECK(cond, ...)                                                                    \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            tc_failures++;                                                                  \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                            \
            fprintf(stderr, __VA_ARGS__);                                                   \
            fputc('\n', stderr);                                                            \
        }                                                                                   \
    } while (0)

/* malloc that ends the test (exit 1) when memory runs out; 0 bytes gives a valid pointer. */
void *tc_xmalloc(size_t bytes);
/* A value no QR produces by accident, to detect writes outside the matrices. */
stap_cf32 tc_poison(size_t i);
/* Remove a directory and everything below it (a test's scratch directory). */
void tc_remove_tree(const char *dir);
/* The atomic writers' temporary files (".NAME.tmp.*") in a directory (-1: not readable). */
int tc_count_tmp(const char *dir);

#endif
