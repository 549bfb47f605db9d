/* run_devices: a recording's CPIs on several GPUs in one process (issue 32) — CPI g to the
 * engine g mod n, each engine kept full by a thread of its own (its device selected), the
 * reader's buffers shared, every result handed to the writer as row g (cpi_writer_put_row:
 * it writes the rows in order). Dealt round-robin: the devices are alike and the CPIs cost
 * the same, so each keeps its slots full without a queue between them, and the rows a
 * device has not reached bound the others (the reader's buffers). When a device stops — an
 * error, or a graceful stop (SIGINT/SIGTERM) — its next CPI is a row that never comes: the
 * rows from it on are not written, so what is written is the CPIs in order up to the first
 * missing one, each once; after an error the other devices still run the CPIs before it. */
#ifndef RUN_DEVICES_H
#define RUN_DEVICES_H

#include "cpi_io.h"
#include "stream_loop.h"

enum { RUN_MAX_DEVICES = 16 };

typedef struct run_devices_job {
    stap_engine **eng;        /* one per device, made on the main thread after selecting it */
    const int *devices;       /* CUDA's numbers                                         */
    int n;
    cpi_reader *reader;       /* started with enough buffers (run_devices_buffers)      */
    cpi_writer *writer;       /* a queue of at least run_devices_depth rows             */
    long long cpis;           /* the CPIs to run                                        */
    /* each result's checks before it is written (called under a lock), or NULL */
    int (*check)(void *user, const stap_engine *e, const stap_cpi_result *r, stap_error *err);
    void *check_user;
} run_devices_job;

/* The reader's buffers and the writer's depth for n engines of `slots` slots and `readers`
 * reader threads: enough that no device waits for another's buffer or row. */
int run_devices_buffers(int n, int slots, int readers);
int run_devices_depth(int n, int slots, int readers);

/* Run the job; per-device stats into st[0..n-1]; the error of the first CPI that failed
 * (naming the device and the input's CPI), with *first_missing the first CPI that was not
 * run (job->cpis when every one was). When a device fails at CPI g the others stop
 * submitting from g on but finish every CPI before it, those in flight included: the rows
 * written are exactly the CPIs before g. */
int run_devices(const run_devices_job *job, stream_stats *st, long long *first_missing,
                stap_error *err);

#endif
