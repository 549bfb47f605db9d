/* testutil.c: the failure counter behind CHECK (testutil.h). */
#include "testutil.h"

int tc_failures = 0;
