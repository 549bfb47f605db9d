/* cpi_io: the threads around the engine when CPIs come from and go to files — a reader
 * that reads CPI n+1.. of a recording into host buffers (pinned for the GPU engine) while
 * CPI n is processed, and a writer that appends each CPI's results to the result file in
 * order. A slow disk slows the run (the queues are bounded) but never reorders or drops a
 * CPI; the first error of either thread stops the run with its message. */
#ifndef CPI_IO_H
#define CPI_IO_H

#include "engine.h"
#include "h5io.h"

/* The input format an engine for rec takes: the recording's samples as stored
 * (stap_recording_stored_format) when they are integer pairs and host_decode is 0, else
 * complex64 (the reader decodes); desc says which, and why, for the report. */
void cpi_input_format(const stap_recording *rec, int host_decode, stap_sample_format *f,
                      char *desc, size_t len);

typedef struct cpi_reader cpi_reader;
/* Read `count` CPIs of rec in order, `nbuf` buffers ahead (at least one more than the
 * threads), with `threads` reader threads when rec reads in parallel (stap_recording_
 * parallel; else one): its written CPIs (stap_recording_written; the unwritten ones are
 * never read), from the first again when count runs past them (a recording replayed).
 * The CPIs are read as the engine takes them: as stored (stap_recording_read_stored) when
 * its input format is integer pairs, else decoded to complex64. STAP_EFORMAT when rec has no
 * written CPI. */
int cpi_reader_start(cpi_reader **r, stap_recording *rec, stap_engine *e, long long count,
                     int nbuf, int threads, stap_error *err);
/* The same for one rank's share (rtstap-mpi): its i-th CPI is the written CPI first + i *
 * stride. */
int cpi_reader_start_share(cpi_reader **r, stap_recording *rec, stap_engine *e, long long count,
                           long long first, long long stride, int nbuf, int threads,
                           stap_error *err);
/* The reader threads running. */
int cpi_reader_threads(const cpi_reader *r);
/* How the CPIs are read, for reports: stap_recording_read_path, or the stored bytes' path. */
const char *cpi_reader_path(const cpi_reader *r);
/* GB/s of reading the whole file at path by `threads` threads, each a contiguous part with
 * 4 MiB preads (the page cache or the disk): the yardstick of a reader's rate. */
double cpi_plain_read_gbs(const char *path, int threads);
/* --readers' default: the CPUs less two (the stream loop and the writer), 1 to 16. */
int cpi_reader_default_threads(void);
/* Wait for the buffer of the i-th CPI read (i counts from 0, in order). */
int cpi_reader_get(cpi_reader *r, long long i, const void **cube, stap_error *err);
/* The input's CPI index of the i-th CPI read. */
long long cpi_reader_input_cpi(const cpi_reader *r, long long i);
/* The i-th CPI's buffer is free again (its copy-in is done: after collect). */
void cpi_reader_release(cpi_reader *r, long long i);
/* Seconds of wall time with a read in progress (the threads overlap), and the threads'
 * summed wait for a free buffer. */
void cpi_reader_times(const cpi_reader *r, double *read_s, double *wait_s);
void cpi_reader_stop(cpi_reader *r); /* joins the thread, frees the buffers */

typedef struct cpi_writer cpi_writer;
/* Append to w from a thread; `depth` results queued (copied) at most. */
int cpi_writer_start(cpi_writer **cw, stap_result_writer *w, size_t weights_len,
                     size_t output_len, int depth, stap_error *err);
/* Where the writer thread puts each row, in order (row 0, 1, ...), instead of a result
 * writer: weights/output NULL where their length is 0. */
typedef int (*cpi_row_sink_fn)(void *user, long long row, long long input_cpi,
                               const stap_cf32 *weights, const stap_cf32 *output,
                               const stap_detection *det, size_t ndet, const double *stage_ms,
                               stap_error *err);
int cpi_writer_start_sink(cpi_writer **cw, cpi_row_sink_fn sink, void *user, size_t weights_len,
                          size_t output_len, int depth, stap_error *err);
/* Queue a copy of r, the input's CPI input_cpi (waits while the queue is full); fails with
 * the writer's first error. */
int cpi_writer_put(cpi_writer *cw, const stap_cpi_result *r, long long input_cpi, stap_error *err);
/* Queue a copy of r as row `row`, from any of several threads, the rows in any order (each
 * once): waits while the row is `depth` or more past the next one written; the writer
 * writes them in order. A row at or past cpi_writer_limit's is dropped (STAP_OK). */
int cpi_writer_put_row(cpi_writer *cw, long long row, const stap_cpi_result *r, long long input_cpi,
                       stap_error *err);
/* Rows from `row` on will never come (a device stopped there): nothing from it on is
 * written, and no put waits for it. */
void cpi_writer_limit(cpi_writer *cw, long long row);
/* The rows written so far (in order, from 0). */
long long cpi_writer_rows(cpi_writer *cw);
/* Seconds the writer has spent writing so far. */
double cpi_writer_seconds(cpi_writer *cw);
/* Wait until everything queued is written; joins; returns the writer's first error. The
 * stap_result_writer is not closed. */
int cpi_writer_finish(cpi_writer *cw, double *write_s, stap_error *err);

/* The reader as stream_loop callbacks (user: the reader). */
int cpi_reader_get_fn(void *reader, long long i, const void **cube, stap_error *err);
void cpi_reader_release_fn(void *reader, long long i);
long long cpi_reader_input_cpi_fn(const void *reader, long long i); /* (cpi_checks.name_cpi) */

#endif
