/* listen_out: `rtstap listen -o FILE` — the result file of a recording's run (docs/file-format.md)
 * from a live stream: rows in CPI order, /axes/input_cpi the stream's CPI index of each row,
 * the CPIs lost named (/config cpis_lost, /lost_cpis: no row), published atomically when
 * listen ends, after a signal with /config stopped. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "listen.h"
#include "run_job.h"
#include "rtstap/common.h"

int listen_out_open(listen_job *j, const stap_engine_options *eo)
{
    stap_error err;
    snprintf(j->samples, sizeof j->samples, "int16 (i, q) as received (docs/live.md), scale %.17g", j->scale);
    stap_result *h = &j->hdr;
    run_result_header(h, j->eng, j->source, &eo->cfar, j->cfar_desc, sizeof j->cfar_desc);
    h->input_samples = j->samples;
    const stap_write_options wo = {cli_write_mode(j->force), j->keep, j->cpis, 0};
    if (stap_result_writer_open(&j->rw, j->output, h, &wo, &err)) return cli_fail(&err);
    return EXIT_OK;
}

int listen_out_publish(listen_job *j)
{
    stap_error err;
    const stap_stream_live_report *L = &j->live;
    long long *lost = L->lost ? malloc(sizeof *lost * (size_t)L->lost) : NULL;
    if (L->lost && !lost) return cli_error(EXIT_PROCESSING, "out of memory for %lld lost CPIs", L->lost);
    long long n = 0;
    for (int r = 0; r < L->nranges; r++)
        for (long long k = 0; k < L->lost_ranges[r].count && n < L->lost; k++) lost[n++] = L->lost_ranges[r].cpi + k;
    char stopped[200] = "";
    if (j->stopped_by)
        snprintf(stopped, sizeof stopped, "by %s after %lld CPIs processed, %lld lost",
                 j->stopped_by == SIGINT ? "SIGINT" : j->stopped_by == SIGTERM ? "SIGTERM" : "a signal",
                 j->rep.all.cpis_done, L->lost);
    stap_result sum;
    memset(&sum, 0, sizeof sum);
    sum.timing_ms = j->rep.all.stage_median;
    sum.total_ms = stap_now_ms() - j->t_start;
    sum.backend_name = j->hdr.backend_name;
    sum.stopped = stopped[0] ? stopped : NULL;
    sum.engine_note = stap_engine_note(j->eng);
    sum.lost_counted = 1;
    sum.cpis_lost = n;
    sum.lost_cpis = lost;
    const int st = stap_result_writer_close(j->rw, &sum, &err);
    j->rw = NULL;
    free(lost);
    if (st) return cli_fail(&err);
    if (stopped[0]) fprintf(stderr, "rtstap: stopped %s; %s holds them (/config stopped)\n", stopped, j->output);
    return EXIT_OK;
}
