/* testutil.c: the failure counter behind CHECK (testutil.h). */
#include "testutil.h"

#include <stdlib.h>

int tc_failures = 0;

void *tc_xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

cf32 tc_poison(size_t i) { return (float)(-777.0 - (double)(i % 13)) + I * 1234.5f; }
