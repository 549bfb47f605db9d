/* testing.h: the library's test hooks — faults injected on purpose, so that the paths that
 * handle a failing engine, a device allocation that fails and a real device fault are tested
 * without a broken machine. For tests only: a program sets them once, before it creates
 * engines (rtstap reads RTSTAP_TEST_FAIL_ENGINE, RTSTAP_TEST_FAIL_DEVICE_ALLOC and
 * RTSTAP_TEST_DEVICE_TRAP from its environment and hands them on: docs/usage.md
 * "Environment"). The library itself reads no environment variable for them. Process-wide;
 * 0 = off; each count starts again at the call. */
#ifndef STAP_TESTING_H
#define STAP_TESTING_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stap_test_hooks {
    long long fail_collect;      /* the K-th stap_engine_collect (from 1) fails as a device
                                    fault would (STAP_EDEVICE), on any backend            */
    long long fail_device_alloc; /* the K-th device allocation fails, as on a full device  */
    long long device_trap;       /* the K-th GPU submit launches a kernel that traps: a real
                                    device fault (the context is lost)                    */
} stap_test_hooks;

/* Set the hooks (NULL: all off). */
void stap_test_hooks_set(const stap_test_hooks *h);

#ifdef __cplusplus
}
#endif

#endif
